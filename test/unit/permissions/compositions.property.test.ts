import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { CORPUS } from './corpus';
import type { CorpusGroup } from './corpus/types';
import { makeFixture, type PermissionFixture } from './fixture';

/**
 * The engine's first promise as a property: however commands are composed — wrappers
 * (`timeout 5`, `nice -n 5`, `env FOO=1`, `command`, `time`, …), lists (`;`, `&&`, `||`, `&`,
 * newline), pipes, subshells, groups, command and process substitutions — the composition is
 * never allowed when one of its parts alone would not be.
 *
 * A wrapper is put only where it keeps the part's meaning: `timeout 5 declare …` runs no builtin
 * (there is no program `declare`), so it is not a way to hide one.
 *
 * The parts come from the permission corpus (corpus/index.ts), group by group, each under its
 * group's own settings file and fixture: every case of a group is a part, sorted by what the
 * engine decides for it alone in the mode at hand. A group added to the corpus is picked up here
 * without a change. Left out of the parts: cases bash itself rejects as a syntax error (gluing text
 * to them can make valid, different commands) and cases whose `#` starts a comment (it would
 * swallow what follows). A composition with an allowed part that changes what later parts mean
 * (`cd`/`pushd`/`popd`, assignments, function definitions) is generated but not judged: after
 * `cd src`, `head ../x` is no longer outside the workspace.
 *
 * Replays from its seed: KEEL_FC_SEED (each run prints its seed first: test/setup/propertySeed.global.ts),
 * and KEEL_FC_RUNS for more runs.
 */
const MODES: PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'];
/** Programs that run their arguments as a program: a shell builtin or keyword after them is not one. */
const PROGRAM_WRAPPERS = ['timeout 5 ', 'nice -n 5 ', 'env FOO=1 ', 'nohup ', 'stdbuf -o0 ', 'setsid ', 'xargs ', 'exec ', 'env -i ', 'timeout -s KILL 5 ', 'nice '];
/** The shell's own: they keep a builtin a builtin (`command declare …`, `FOO=1 cd x`). */
const SHELL_WRAPPERS = ['command ', 'FOO=1 '];
/** `time` times any pipeline, compound commands included. */
const TIME = 'time ';
const BUILTINS = new Set(
  'declare typeset export local readonly unset cd pushd popd eval exec source . history set shopt alias unalias trap builtin hash read mapfile readarray let shift return exit break continue wait jobs fg bg disown enable complete ulimit umask getopts caller dirs fc logout suspend times type command'.split(' '),
);
const KEYWORDS = new Set('if for while until case select function [[ (( { ( ! coproc time'.split(' '));

/** The wrappers that keep the meaning of `part` (which a bare command name starts). */
function wrappersFor(part: string): string[] {
  const first = /^\s*([^\s;&|()]+|[()])/.exec(part)?.[1] ?? '';
  if (KEYWORDS.has(first) || /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(first) || /^[A-Za-z_][A-Za-z0-9_]*\(\)/.test(part.trim())) return [TIME];
  if (BUILTINS.has(first)) return [TIME, ...SHELL_WRAPPERS];
  return [TIME, ...SHELL_WRAPPERS, ...PROGRAM_WRAPPERS];
}

interface Part {
  text: string;
  multiline: boolean;
}
interface Composition {
  text: string;
  parts: string[];
  /** Ends with a line of its own (a here-document), so only a newline may follow it. */
  multiline: boolean;
}

const fixtures = new Map<CorpusGroup, PermissionFixture>();
const decided = new Map<string, string>();
let usable: { group: CorpusGroup; parts: Part[] }[] = [];

function validBash(command: string): boolean {
  // An argument to a program cannot hold a NUL (bash would get a truncated command): not a part.
  if (command.includes('\0')) return false;
  return spawnSync('bash', ['-n', '-c', command], { stdio: 'ignore' }).status === 0;
}

async function decide(group: CorpusGroup, command: string, mode: PermissionMode): Promise<string> {
  const key = `${group.name}\u0000${mode}\u0000${command}`;
  let d = decided.get(key);
  if (d === undefined) {
    d = (await fixtures.get(group)!.bash(command, mode)).decision;
    decided.set(key, d);
  }
  return d;
}

const CHANGES_LATER_PARTS = /(^|[\s;&|(`])(cd|pushd|popd|alias|export|declare|typeset|readonly|local|source|\.)(\s|$)|(^|[\s;&|(])[A-Za-z_][A-Za-z0-9_]*\+?=|\(\)\s*\{|(^|\s)function\s/;

beforeAll(async () => {
  for (const g of CORPUS) {
    const fx = await makeFixture(g.settings);
    g.prepare?.(fx);
    fixtures.set(g, fx);
  }
  usable = CORPUS.map((group) => ({
    group,
    parts: [...new Set((group.bash ?? []).map((c) => c.command))]
      .filter((text) => !/(^|\s)#/.test(text) && validBash(text))
      .map((text) => ({ text, multiline: text.includes('\n') })),
  })).filter((g) => g.parts.length >= 4);
}, 400_000); // a fixture per group and one `bash -n` per corpus command: minutes on a loaded 2-core machine
afterAll(() => {
  for (const fx of fixtures.values()) fx.cleanup();
});

/** Builds a random composition over `parts` (indices into the group's parts). */
function compositionArb(parts: Part[]): fc.Arbitrary<Composition> {
  const leaf: fc.Arbitrary<Composition> = fc.record({ i: fc.nat({ max: parts.length - 1 }), wrap: fc.option(fc.nat(), { freq: 3 }) }).map(({ i, wrap }) => {
    const p = parts[i]!;
    const choices = wrappersFor(p.text);
    return { text: `${wrap === null ? '' : choices[wrap % choices.length]}${p.text}`, parts: [p.text], multiline: p.multiline };
  });
  const after = (c: Composition, sep: string) => (c.multiline ? `${c.text}\n` : `${c.text}${sep}`);
  const { node } = fc.letrec<{ node: Composition }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(tie('node'), fc.constantFrom(' ; ', ' && ', ' || ', ' & ', '\n'), tie('node')).map(([a, op, b]) => ({ text: `${after(a, op)}${b.text}`, parts: [...a.parts, ...b.parts], multiline: b.multiline })),
      fc.tuple(tie('node'), tie('node')).map(([a, b]) => ({ text: `${after(a, ' | ')}${b.text}`, parts: [...a.parts, ...b.parts], multiline: b.multiline })),
      tie('node').map((a) => ({ text: `( ${after(a, ' ')})`, parts: a.parts, multiline: false })),
      tie('node').map((a) => ({ text: `{ ${after(a, '; ')}}`, parts: a.parts, multiline: false })),
      fc.tuple(tie('node'), fc.constantFrom('echo $(', 'echo "$(', 'x=$(', 'cat <(', 'diff <(ls) <(', 'echo `')).map(([a, open]) => {
        const close = open.endsWith('`') ? '`' : open.includes('"') ? ')"' : ')';
        // Backquotes cannot hold backquotes; such a part is put in $( ) instead.
        const [o, c] = open.endsWith('`') && a.text.includes('`') ? ['echo $(', ')'] : [open, close];
        return { text: `${o}${after(a, '')}${c}`, parts: a.parts, multiline: false };
      }),
    ),
  }));
  return node;
}

describe('compositions of corpus commands', () => {
  it('are never allowed when a part alone would not be', async () => {
    expect(usable.length).toBeGreaterThan(0);
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: Math.max(0, usable.length - 1) }).chain((g) => fc.tuple(fc.constant(g), fc.constantFrom(...MODES), compositionArb(usable[g]!.parts))),
        async ([g, mode, comp]) => {
          const { group } = usable[g]!;
          const alone = await Promise.all(comp.parts.map(async (p) => ({ p, d: await decide(group, p, mode) })));
          const blocked = alone.filter((a) => a.d !== 'allow');
          // An allowed part that changes what later parts mean may make them harmless; such a
          // composition says nothing about this property.
          if (blocked.length === 0 || alone.some((a) => a.d === 'allow' && CHANGES_LATER_PARTS.test(a.p))) return;
          checked++;
          const d = await decide(group, comp.text, mode);
          expect(d, `group ${group.name}, ${mode}: ${JSON.stringify(comp.text)} was allowed, but alone ${blocked.map((b) => `${JSON.stringify(b.p)} → ${b.d}`).join(', ')}`).not.toBe('allow');
        },
      ),
      { numRuns: Number(process.env.KEEL_FC_RUNS ?? 300), endOnFailure: true },
    );
    // Most runs put a part that is not allowed somewhere in the composition.
    expect(checked).toBeGreaterThan(Number(process.env.KEEL_FC_RUNS ?? 300) / 3);
  }, 300_000);
});
