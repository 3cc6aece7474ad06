import { afterEach, describe, expect, it } from 'vitest';
import { TRUST_CASES } from './corpus';
import { World } from './world';

/**
 * The trust boundary's attack corpus (corpus.ts), case by case, each in a fresh world on disk.
 * At least 60 cases beyond issue 21's own (those are the CLI end-to-end tests,
 * test/integration/cli/trustBoundary.test.ts).
 */
let world: World | undefined;
afterEach(() => {
  world?.dispose();
  world = undefined;
});

describe('the trust corpus', () => {
  it('holds at least 60 cases in every group the issue names', () => {
    expect(TRUST_CASES.length).toBeGreaterThanOrEqual(60);
    const groups = new Set(TRUST_CASES.map((c) => c.group));
    for (const g of ['links', 'renames', 'changed content', 'environment variables', 'another repository at the same path', 'Restricted Mode', 'case variants']) expect(groups).toContain(g);
    expect(new Set(TRUST_CASES.map((c) => `${c.group}: ${c.name}`)).size).toBe(TRUST_CASES.length);
  });
});

for (const group of [...new Set(TRUST_CASES.map((c) => c.group))]) {
  describe(group, () => {
    for (const c of TRUST_CASES.filter((x) => x.group === group)) {
      it(c.name, async () => {
        world = new World();
        await c.run(world);
      });
    }
  });
}
