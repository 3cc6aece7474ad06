import { describe, expect, it } from 'vitest';
import { CORPUS } from './corpus';
import { decisionsOf } from './corpus/decisions';
import type { CorpusGroup } from './corpus/types';

/**
 * bench/permissions.bench.ts times the corpus through corpus/decisions.ts. A group with a kind of
 * case that file does not know would be left out of the figures, so it must fail here, where the
 * person who adds the group runs the tests.
 */
describe('the permission bench covers the whole corpus', () => {
  it.each(CORPUS.map((g) => [g.name, g] as const))('group %s: one timed decision per case', (_name, g) => {
    expect(decisionsOf(g)).toHaveLength((g.bash?.length ?? 0) + (g.tools?.length ?? 0) + (g.domains?.length ?? 0));
  });

  it('refuses a group with a kind of case it does not know', () => {
    const g = { name: 'future', bash: [], files: [{ path: 'x' }] } as unknown as CorpusGroup;
    expect(() => decisionsOf(g)).toThrow(/future.*files/);
  });
});
