import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaCoalescer } from '../../../src/core/machines/stream/actors';
import type { ProviderEvent } from '../../../src/core/providers/types';

type Delta = Extract<ProviderEvent, { type: 'content_block_delta' }>;
const text = (index: number, t: string): Delta => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
const json = (index: number, t: string): Delta => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: t } });
const stop = (index: number): ProviderEvent => ({ type: 'content_block_stop', index });

/** Adjacent deltas of one block and kind, joined: what any coalescing must preserve. */
function normalise(events: ProviderEvent[]): unknown[] {
  const out: unknown[] = [];
  for (const e of events) {
    const prev = out.at(-1) as { key?: string; text: string } | undefined;
    if (e.type === 'content_block_delta') {
      const key = `${e.index}:${e.delta.type}`;
      const t = e.delta.type === 'text_delta' ? e.delta.text : e.delta.type === 'input_json_delta' ? e.delta.partial_json : '';
      if (prev?.key === key) prev.text += t;
      else out.push({ key, text: t });
    } else out.push(e);
  }
  return out;
}

describe('DeltaCoalescer', () => {
  it('merges a burst into one event, keeps order, and passes a lone delta through as received', () => {
    const out: ProviderEvent[] = [];
    const c = new DeltaCoalescer((e) => out.push(e));
    const lone = text(0, 'Hel');
    c.push(lone);
    c.flush();
    c.push(text(0, 'lo, '));
    c.push(text(0, 'world'));
    c.push(stop(0));
    c.push(json(1, '{"a"'));
    c.push(json(1, ':1}'));
    c.flush();
    c.flush();
    expect(out[0]).toBe(lone);
    expect(out.slice(1)).toEqual([text(0, 'lo, world'), stop(0), json(1, '{"a":1}')]);
  });

  it('whatever the events and flush points, the output is the input with adjacent deltas joined', () => {
    const event = fc.oneof(
      fc.record({ i: fc.integer({ min: 0, max: 1 }), t: fc.string({ maxLength: 4 }) }).map(({ i, t }) => text(i, t)),
      fc.record({ i: fc.integer({ min: 0, max: 1 }), t: fc.string({ maxLength: 4 }) }).map(({ i, t }) => json(i, t)),
      fc.integer({ min: 0, max: 1 }).map(stop),
      fc.constant('flush' as const),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (steps) => {
        const out: ProviderEvent[] = [];
        const c = new DeltaCoalescer((e) => out.push(e));
        let emittedSinceFlush = 0;
        let maxPerFlush = 0;
        for (const s of steps) {
          const before = out.length;
          if (s === 'flush') c.flush();
          else c.push(s);
          emittedSinceFlush += out.filter((e, k) => k >= before && e.type === 'content_block_delta').length;
          if (s === 'flush') {
            maxPerFlush = Math.max(maxPerFlush, emittedSinceFlush);
            emittedSinceFlush = 0;
          }
        }
        c.flush();
        const input = steps.filter((s): s is ProviderEvent => s !== 'flush');
        expect(normalise(out)).toEqual(normalise(input));
        // Between flushes with no other event, at most one delta is emitted.
        const onlyDeltas = steps.every((s) => s === 'flush' || s.type === 'content_block_delta');
        const oneKind = new Set(input.map((e) => (e.type === 'content_block_delta' ? `${e.index}:${e.delta.type}` : ''))).size <= 1;
        if (onlyDeltas && oneKind) expect(maxPerFlush).toBeLessThanOrEqual(1);
      }),
    );
  });
});
