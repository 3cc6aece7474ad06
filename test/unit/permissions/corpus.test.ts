import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixture, type PermissionFixture } from './fixture';
import { CORPUS } from './corpus';
import { realBashAvailable, runRealBash } from './corpus/realBash';
import type { CorpusGroup } from './corpus/types';

/**
 * The permission corpus (corpus/*.ts, listed in corpus/index.ts): each case is a command or a tool
 * input and the decision the engine must reach, grouped by root cause. Each group runs against its
 * own fixture (fixture.ts: CORPUS_SETTINGS unless the group names other settings). A case with
 * `realBash` is also run in real bash inside a sandboxed throwaway copy, to prove that it does what
 * the case says (a hole really deletes, an allowed command really is harmless).
 */
// Each group builds its own fixture in its own hook: groups that set up git repositories take
// a while, and one hook for every group would outgrow the hook timeout.
const fixtures = new Map<CorpusGroup, PermissionFixture>();
const fxOf = (g: CorpusGroup): PermissionFixture => fixtures.get(g) as PermissionFixture;

for (const g of CORPUS) {
  describe(`corpus group ${g.name}`, () => {
    beforeAll(async () => {
      const fx = await makeFixture(g.settings, g.protectedFiles ? { protectedFiles: g.protectedFiles } : {});
      fixtures.set(g, fx);
      g.prepare?.(fx);
    });
    afterAll(() => fixtures.get(g)?.cleanup());
    if (g.bash?.length) {
      it.each(g.bash)('Bash $group: $command ($mode) → $expect', async (c) => {
        const d = await fxOf(g).bash(c.command, c.mode ?? 'default');
        expect(d.decision, d.reason).toBe(c.expect);
      });
    }
    if (g.tools?.length) {
      it.each(g.tools)('$group: $tool $input ($mode) → $expect', async (c) => {
        const fx = fxOf(g);
        const fixed = { ...c.input };
        if (fixed.file_path === '~docs') fixed.file_path = `${fx.home}/docs/notes.md`;
        const d = await fx.decide(c.tool, fixed, c.mode ?? 'default');
        expect(d.decision, d.reason).toBe(c.expect);
      });
    }
    if (g.domains?.length) {
      it.each(g.domains)('WebFetch $url → $expect', async (c) => {
        const d = await fxOf(g).decide('WebFetch', { url: c.url, prompt: 'summarise' });
        expect(d.decision, d.reason).toBe(c.expect);
      });
    }
    const real = (g.bash ?? []).filter((c) => c.realBash);
    if (real.length) {
      describe.skipIf(!realBashAvailable())('what real bash does', () => {
        it.each(real)('$command', async (c) => {
          const r = await runRealBash(g, c.command, c.realBash as NonNullable<typeof c.realBash>);
          expect(r.proved, `the check "${c.realBash?.proves}" failed; the command printed:\n${r.output}`).toBe(0);
        });
      });
    }
  });
}

it('the corpus holds every case of every group', () => {
  const n = CORPUS.reduce((s, g) => s + (g.bash?.length ?? 0) + (g.tools?.length ?? 0) + (g.domains?.length ?? 0), 0);
  expect(n).toBeGreaterThanOrEqual(1850);
});
