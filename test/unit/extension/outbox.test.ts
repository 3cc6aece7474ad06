import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../src/extension/outbox';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { MemoryLogger } from './fakes';

const CONFIG = { provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' } as const;
const snapshot = { type: 'snapshot', transcript: null, config: CONFIG } as const;
const text = (delta: string) => ({ type: 'event', event: { type: 'text', taskId: 't1', delta } }) as const;

function outbox(answer: boolean | (() => boolean) = true) {
  const posted: ToWebviewMessage[] = [];
  const log = new MemoryLogger();
  const box = new Outbox({
    post: (m) => {
      posted.push(m);
      return Promise.resolve(typeof answer === 'function' ? answer() : answer);
    },
    log,
    maxPending: 3,
  });
  return { box, posted, log };
}

const summary = (ms: ToWebviewMessage[]) => ms.map((m) => `${m.seq}:${m.type}${m.type === 'event' && m.event.type === 'text' ? `:${m.event.delta}` : ''}${m.type === 'error' ? `:${m.message}` : ''}`);

describe('Outbox', () => {
  it('posts nothing before the view is ready', () => {
    const { box, posted } = outbox();
    box.send(text('a'));
    box.send({ type: 'error', message: 'e1' });
    expect(posted).toEqual([]);
    expect(box.isReady).toBe(false);
  });

  it('on ready sends the snapshot as seq 1, then buffered host errors, then live messages', () => {
    const { box, posted } = outbox();
    box.send(text('covered by the snapshot'));
    box.send({ type: 'error', message: 'e1' });
    box.open(snapshot);
    box.send(text('live'));
    expect(summary(posted)).toEqual(['1:snapshot', '2:error:e1', '3:event:live']);
  });

  it('buffers while hidden and resends on the next ready, numbering from 1 again', () => {
    const { box, posted } = outbox();
    box.open(snapshot);
    box.send(text('a'));
    box.close();
    box.send(text('b'));
    box.send({ type: 'error', message: 'while hidden' });
    expect(summary(posted)).toEqual(['1:snapshot', '2:event:a']);
    box.open(snapshot);
    box.send(text('c'));
    expect(summary(posted.slice(2))).toEqual(['1:snapshot', '2:error:while hidden', '3:event:c']);
  });

  it('keeps only the newest buffered errors', () => {
    const { box, posted } = outbox();
    for (const m of ['e1', 'e2', 'e3', 'e4', 'e5']) box.send({ type: 'error', message: m });
    box.open(snapshot);
    expect(summary(posted)).toEqual(['1:snapshot', '2:error:e3', '3:error:e4', '4:error:e5']);
  });

  it('a failed post makes the view not ready until its next ready', async () => {
    let ok = true;
    const { box, posted, log } = outbox(() => ok);
    box.open(snapshot);
    ok = false;
    box.send(text('lost'));
    await Promise.resolve();
    await Promise.resolve();
    expect(box.isReady).toBe(false);
    expect(log.lines.some((l) => l.startsWith('warn webview message 2 not delivered'))).toBe(true);
    box.send({ type: 'error', message: 'kept' });
    ok = true;
    box.open(snapshot);
    expect(summary(posted.slice(2))).toEqual(['1:snapshot', '2:error:kept']);
  });

  it('a late failure from an earlier page does not close the current one', async () => {
    const resolvers: Array<(ok: boolean) => void> = [];
    const box = new Outbox({ post: () => new Promise<boolean>((r) => resolvers.push(r)) });
    box.open(snapshot);
    box.close();
    box.open(snapshot);
    resolvers[0]!(false);
    await new Promise((r) => setTimeout(r, 0));
    expect(box.isReady).toBe(true);
  });

  it('survives a post that throws', () => {
    const box = new Outbox({
      post: () => {
        throw new Error('disposed');
      },
    });
    expect(() => box.open(snapshot)).not.toThrow();
    expect(box.isReady).toBe(false);
  });
});
