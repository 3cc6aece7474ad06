import type { ShellWord } from './words';

/**
 * Options that make a program run another program it names (`sort --compress-program=sh`,
 * `tar --to-command`, `git -c core.pager=…`): a Bash rule allows such a command only when it
 * names the option itself (`Bash(tar --to-command:*)`). Matching follows how the programs read
 * their options, leaning towards finding one: a long option matches from any prefix (GNU
 * programs accept unambiguous abbreviations: `--compress-prog`), a short one anywhere in a
 * cluster (`ssh -vo ProxyCommand=…`, `tar -xIsh`), tar's old-style first word (`tar xIf …`) too,
 * and a computed word may be any of them. Pure.
 */
interface ExecSpec {
  long?: readonly string[];
  short?: string;
  /** tar: a first argument without a dash is a cluster of short options. */
  oldStyle?: boolean;
}

const SPECS: Record<string, ExecSpec> = {
  sort: { long: ['compress-program'] },
  rg: { long: ['pre', 'pre-glob'] },
  tar: { long: ['to-command', 'use-compress-program', 'checkpoint-action', 'info-script', 'new-volume-script', 'rsh-command', 'rmt-command'], short: 'IF', oldStyle: true },
  man: { long: ['pager', 'html'], short: 'PH' },
  zip: { long: ['unzip-command'], short: 'T' },
  rsync: { long: ['rsh', 'rsync-path'], short: 'e' },
  ssh: { short: 'oF' },
  scp: { short: 'oFS' },
  sftp: { short: 'oFS' },
};

function matches(spec: ExecSpec, w: ShellWord, first: boolean): boolean {
  const v = w.value;
  if (v.startsWith('--')) {
    const name = v.slice(2).split('=')[0] ?? '';
    return name !== '' && (spec.long ?? []).some((l) => l.startsWith(name));
  }
  const short = spec.short ?? '';
  if (v.startsWith('-')) return [...v.slice(1)].some((c) => short.includes(c));
  return !!spec.oldStyle && first && /^[A-Za-z]+$/.test(v) && [...v].some((c) => short.includes(c));
}

/** Index of the word where inline code starts in `words` of program `base`, or -1 (git: gitPlan.ts). */
export function execOptionAt(base: string, words: readonly ShellWord[]): number {
  const spec = Object.hasOwn(SPECS, base) ? SPECS[base] : undefined;
  if (!spec) return -1;
  return words.findIndex((w, k) => k > 0 && (w.dynamic || (!w.glob && matches(spec, w, k === 1))));
}
