import type { EngineDecision } from '../../../../src/core/permissions';
import type { PermissionFixture } from '../fixture';
import type { CorpusGroup, Decision } from './types';

/**
 * Every case of a corpus group as one decision to make against the group's fixture, made the way
 * corpus.test.ts makes it (Bash through `fx.bash`, other tools through `fx.decide` with `~docs`
 * meaning a file in the fixture's home, WebFetch with a fixed prompt). bench/permissions.bench.ts
 * times these, so it covers every group listed in corpus/index.ts without knowing them.
 */
export interface CorpusDecision {
  group: string;
  /** Which root cause inside the group (the case's own `group`). */
  cause: string;
  /** For people: the command, tool input or URL. */
  label: string;
  expect: Decision;
  decide(fx: PermissionFixture): Promise<EngineDecision>;
}

/** The keys a group may have; a new kind of case must be taught here, or the bench would skip it. */
const KNOWN_KEYS = new Set(['name', 'settings', 'protectedFiles', 'prepare', 'bash', 'tools', 'domains']);

/** The input a tool case means in `fx` (corpus.test.ts does the same). */
export function toolInputIn(fx: PermissionFixture, input: Record<string, unknown>): Record<string, unknown> {
  return input.file_path === '~docs' ? { ...input, file_path: `${fx.home}/docs/notes.md` } : { ...input };
}

/** Throws when the group has a key this file does not know (a new kind of case). */
export function decisionsOf(g: CorpusGroup): CorpusDecision[] {
  const unknown = Object.keys(g).filter((k) => !KNOWN_KEYS.has(k));
  if (unknown.length > 0) throw new Error(`corpus group "${g.name}" has ${unknown.join(', ')}: a kind of case test/unit/permissions/corpus/decisions.ts does not know yet`);
  const out: CorpusDecision[] = [];
  for (const c of g.bash ?? []) {
    out.push({ group: g.name, cause: c.group, label: `Bash ${JSON.stringify(c.command)} (${c.mode ?? 'default'})`, expect: c.expect, decide: (fx) => fx.bash(c.command, c.mode ?? 'default') });
  }
  for (const c of g.tools ?? []) {
    out.push({ group: g.name, cause: c.group, label: `${c.tool} ${JSON.stringify(c.input)} (${c.mode ?? 'default'})`, expect: c.expect, decide: (fx) => fx.decide(c.tool, toolInputIn(fx, c.input), c.mode ?? 'default') });
  }
  for (const c of g.domains ?? []) {
    out.push({ group: g.name, cause: c.group, label: `WebFetch ${c.url}`, expect: c.expect, decide: (fx) => fx.decide('WebFetch', { url: c.url, prompt: 'summarise' }) });
  }
  return out;
}
