import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyDelta, makeDelta, Pieces } from '../../../src/core/checkpoints/delta';

const text = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => `line ${i} of file ${seed}: const value${(i * 7919 + seed) % 1000} = compute(${i});\n`).join(''));

describe('deltas', () => {
  it('turn any base into any target (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        const base = Buffer.from(a);
        const target = Buffer.from(b);
        expect(applyDelta(base, makeDelta(base, target)).equals(target)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('turn a file into an edited copy of itself (property: splices, moves, repeats)', () => {
    const base = text(400, 1);
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(base.length), cut: fc.nat(300), insert: fc.uint8Array({ maxLength: 200 }) }), { maxLength: 6 }),
        (edits) => {
          let target = base;
          for (const e of edits) {
            const at = Math.min(e.at, target.length);
            target = Buffer.concat([target.subarray(0, at), Buffer.from(e.insert), target.subarray(Math.min(target.length, at + e.cut))]);
          }
          const d = makeDelta(base, target);
          expect(applyDelta(base, d).equals(target)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('cost about the size of the change for a small edit of a large file', () => {
    const base = text(20000, 2); // ~1 MB
    const at = 500_000;
    const target = Buffer.concat([base.subarray(0, at), Buffer.from('x'.repeat(100)), base.subarray(at + 100)]);
    expect(makeDelta(base, target).length).toBeLessThan(130);
  });

  it('find a block moved within the file', () => {
    const base = text(3000, 3);
    const block = base.subarray(10_000, 40_000);
    const target = Buffer.concat([block, base.subarray(0, 10_000), base.subarray(40_000)]);
    expect(makeDelta(base, target).length).toBeLessThan(200);
  });

  it('rebuild a chain of a thousand edits through pieces without a copy per step', () => {
    let v = text(5000, 4);
    const versions = [v];
    const deltas: Buffer[] = [];
    for (let k = 0; k < 1000; k++) {
      const at = (k * 7919) % (v.length - 100);
      const next = Buffer.concat([v.subarray(0, at), Buffer.from(`edit ${k} `.padEnd(100, '.')), v.subarray(at + 100)]);
      deltas.push(makeDelta(v, next));
      versions.push(next);
      v = next;
    }
    let p = Pieces.of(versions[0]!);
    for (const d of deltas) p = p.apply(d);
    expect(p.bytes().equals(versions[1000]!)).toBe(true);
  });

  it('refuse a delta made for another base', () => {
    const d = makeDelta(Buffer.from('abc'), Buffer.from('abcd'));
    expect(() => applyDelta(Buffer.from('abcdef'), d)).toThrow(RangeError);
  });
});
