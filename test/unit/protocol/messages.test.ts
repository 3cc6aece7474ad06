import { describe, expect, it } from 'vitest';
import { applyTaskEvent } from '../../../src/shared/domain/transcript';
import { parseFromWebview } from '../../../src/shared/protocol/fromWebview';
import { parseToWebview } from '../../../src/shared/protocol/toWebview';
import { ALL_EVENTS, CONFIG, transcript } from './fixtures';

describe('host -> webview messages', () => {
  it('accepts a snapshot with and without a transcript', () => {
    expect(parseToWebview({ type: 'snapshot', seq: 1, transcript: null, config: CONFIG }).ok).toBe(true);
    expect(parseToWebview({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG }).ok).toBe(true);
  });

  it('accepts a transcript with every kind of item (as applyTaskEvent builds it)', () => {
    const t = ALL_EVENTS.reduce(applyTaskEvent, transcript());
    expect(new Set(t.items.map((i) => i.kind))).toEqual(new Set(['user', 'assistant', 'tool', 'notice', 'error']));
    const r = parseToWebview({ type: 'snapshot', seq: 3, transcript: t, config: CONFIG });
    expect(r).toEqual({ ok: true, message: { type: 'snapshot', seq: 3, transcript: t, config: CONFIG } });
  });

  it.each(ALL_EVENTS.map((e) => [e.type, e] as const))('accepts a %s event unchanged', (_type, event) => {
    expect(parseToWebview({ type: 'event', seq: 2, event })).toEqual({ ok: true, message: { type: 'event', seq: 2, event } });
  });

  it('accepts a host error', () => {
    expect(parseToWebview({ type: 'error', seq: 4, message: 'Open a folder' }).ok).toBe(true);
  });

  it.each([
    ['not an object', 'snapshot'],
    ['null', null],
    ['unknown type', { type: 'wat', seq: 1 }],
    ['missing seq', { type: 'error', message: 'x' }],
    ['seq 0', { type: 'error', seq: 0, message: 'x' }],
    ['fractional seq', { type: 'error', seq: 1.5, message: 'x' }],
    ['snapshot without config', { type: 'snapshot', seq: 1, transcript: null }],
    ['bad provider in config', { type: 'snapshot', seq: 1, transcript: null, config: { ...CONFIG, provider: 'gpt' } }],
    ['event of unknown type', { type: 'event', seq: 1, event: { type: 'explode', taskId: 't1' } }],
    ['event without taskId', { type: 'event', seq: 1, event: { type: 'text', delta: 'x' } }],
    ['error event with unknown code', { type: 'event', seq: 1, event: { type: 'error', taskId: 't', code: 'oops', message: 'm', retryable: true } }],
    ['done with bad status', { type: 'event', seq: 1, event: { type: 'done', taskId: 't', status: 'finished', stopReason: null } }],
    ['negative usage', { type: 'event', seq: 1, event: { ...ALL_EVENTS.find((e) => e.type === 'usage'), inputTokens: -1 } }],
    ['transcript item of unknown kind', { type: 'snapshot', seq: 1, config: CONFIG, transcript: { ...transcript(), items: [{ kind: 'html', id: 'x' }] } }],
  ])('rejects %s', (_name, data) => {
    const r = parseToWebview(data);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.length).toBeGreaterThan(0);
  });
});

describe('webview -> host messages', () => {
  it.each([
    [{ type: 'ready' }],
    [{ type: 'ready', lastSeq: 12 }],
    [{ type: 'prompt', text: '  keep my indentation\n' }],
    [{ type: 'newTask' }],
    [{ type: 'cancel' }],
    [{ type: 'retry' }],
    [{ type: 'openLink', href: 'https://example.com/a?b=c' }],
  ])('accepts %j unchanged', (data) => {
    expect(parseFromWebview(data)).toEqual({ ok: true, message: data });
  });

  it.each([
    ['undefined', undefined],
    ['a string', 'ready'],
    ['unknown type', { type: 'approveAll' }],
    ['negative lastSeq', { type: 'ready', lastSeq: -1 }],
    ['empty prompt', { type: 'prompt', text: '' }],
    ['blank prompt', { type: 'prompt', text: ' \n\t' }],
    ['prompt without text', { type: 'prompt' }],
    ['non-string prompt', { type: 'prompt', text: 42 }],
    ['openLink without href', { type: 'openLink' }],
  ])('rejects %s', (_name, data) => {
    expect(parseFromWebview(data).ok).toBe(false);
  });
});
