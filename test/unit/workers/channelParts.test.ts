import { mkdtempSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { linesOf, MessageChannel, PART_BYTES, PART_CHARS } from '../../../src/core/workers/channel';

/**
 * Long messages cross a worker channel in parts (issue 26, item 4): a 50 MB answer arrives whole
 * and equal, no line on the wire is long, and the limits still hold against a peer that sends
 * too much or breaks the framing. Over a real Unix socket pair.
 */
const schema = z.object({ type: z.literal('big'), text: z.string() });
type Big = z.infer<typeof schema>;
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

async function pair(): Promise<[Socket, Socket]> {
  const path = join(mkdtempSync(join(tmpdir(), 'keel-parts-')), 's.sock');
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer((s) => {
      server.close();
      resolve(s);
    }).listen(path);
  });
  const a = connect(path);
  const b = await accepted;
  // A broken channel destroys its end: the writer's EPIPE is expected.
  for (const s of [a, b]) s.on('error', () => undefined);
  sockets.push(a, b);
  return [a, b];
}

function receiver(socket: Socket, opts: { maxLineBytes: number; maxMessageChars?: number }) {
  const got: Big[] = [];
  let broken: string | null = null;
  const done = new Promise<void>((resolve) => {
    new MessageChannel<Big, Big>(socket, {
      schema,
      ...opts,
      onMessage: (m) => {
        got.push(m);
        resolve();
      },
      onBroken: (reason) => {
        broken = reason;
        resolve();
      },
      onClose: () => resolve(),
    });
  });
  return { got, done, broken: () => broken };
}

describe('a worker channel carries long messages in parts', () => {
  it('a 50 MB message arrives whole and equal; no line is longer than the limit', async () => {
    const [a, b] = await pair();
    // Astral characters (two UTF-16 units each) straddle every part boundary.
    const text = '🦜'.repeat(PART_CHARS) + 'x'.repeat(50 * 1024 * 1024) + '\n"quoted"\\';
    const lineLimit = 2 * 1024 * 1024;
    let longest = 0;
    let pending = '';
    b.on('data', (d: Buffer) => {
      pending += d.toString('latin1');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const l of lines) longest = Math.max(longest, l.length);
    });
    const r = receiver(b, { maxLineBytes: lineLimit });
    new MessageChannel<Big, Big>(a, { schema, maxLineBytes: lineLimit, onMessage: () => undefined, onBroken: () => undefined, onClose: () => undefined }).send({ type: 'big', text });
    await r.done;
    expect(r.broken()).toBeNull();
    expect(r.got).toHaveLength(1);
    expect(r.got[0]!.text === text).toBe(true);
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(lineLimit);
  }, 120_000);

  it('a message longer than the limit breaks the channel, as does a message inside another', async () => {
    const [a, b] = await pair();
    const r = receiver(b, { maxLineBytes: 4 * 1024 * 1024, maxMessageChars: 1024 * 1024 });
    for (const line of linesOf({ type: 'big', text: 'y'.repeat(3 * 1024 * 1024) })) a.write(`${line}\n`);
    await r.done;
    expect(r.broken()).toMatch(/a message longer than 1048576 characters/);

    const [c, d] = await pair();
    const r2 = receiver(d, { maxLineBytes: 4 * 1024 * 1024 });
    const parts = linesOf({ type: 'big', text: 'z'.repeat(2 * 1024 * 1024) });
    c.write(`${parts[0]}\n${JSON.stringify({ type: 'big', text: 'in between' })}\n`);
    await r2.done;
    expect(r2.broken()).toMatch(/while another one was still arriving in parts/);
    expect(r2.got).toEqual([]);
  });

  it('a channel destroyed by its owner delivers nothing more, not even what was waiting, and still reports its close', async () => {
    const [a, b] = await pair();
    const got: string[] = [];
    let closed!: () => void;
    const close = new Promise<void>((resolve) => (closed = resolve));
    const channel: MessageChannel<Big, Big> = new MessageChannel<Big, Big>(b, {
      schema,
      maxLineBytes: 4096,
      // One message per turn of the event loop: the rest waits in the queue.
      batch: 1,
      onMessage: (m) => {
        got.push(m.text);
        // The owner lets go of the connection (as the ipcConnection's channel actor stops).
        if (m.text === 'first') channel.destroy();
      },
      onBroken: () => undefined,
      onClose: () => closed(),
    });
    a.write(['first', 'second', 'third'].map((text) => `${JSON.stringify({ type: 'big', text })}\n`).join(''));
    await close;
    expect(got).toEqual(['first']);
  });

  it('a short message is one line, as before', () => {
    expect(linesOf({ type: 'big', text: 'hello' })).toEqual(['{"type":"big","text":"hello"}']);
  });

  it('a message goes in parts exactly when its line would be longer than PART_BYTES bytes', () => {
    const json = (text: string) => JSON.stringify({ type: 'big', text });
    const room = PART_BYTES - json('').length;
    // ASCII up to the limit is one line; one byte more is parts, as is any longer message.
    expect(linesOf({ type: 'big', text: 'a'.repeat(room) })).toEqual([json('a'.repeat(room))]);
    expect(linesOf({ type: 'big', text: 'a'.repeat(room + 1) }).length).toBeGreaterThan(1);
    const long = linesOf({ type: 'big', text: 'a'.repeat(3 * PART_BYTES) });
    expect(long).toHaveLength(Math.ceil(json('a'.repeat(3 * PART_BYTES)).length / PART_CHARS));
    expect(long.map((l) => l[0]).join('')).toBe(`${'+'.repeat(long.length - 1)}=`);
    // Fewer units than bytes: 'é' is two bytes of UTF-8.
    expect(linesOf({ type: 'big', text: 'é'.repeat(Math.floor(room / 2)) })).toHaveLength(1);
    expect(linesOf({ type: 'big', text: 'é'.repeat(Math.floor(room / 2) + 1) }).length).toBeGreaterThan(1);
  });
});
