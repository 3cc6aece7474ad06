import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { BashCase, CorpusGroup, Decision } from './types';

/**
 * Issue 9, environment tricks against the read-only allowlist (no Bash rule): a variable that
 * changes what a read-only program runs or reads (RIPGREP_CONFIG_PATH, MAGIC, PAGER, GIT_*,
 * LESSOPEN, TZDIR, POSIXLY_CORRECT…) makes it ask, whether it is set in front of the command,
 * through env, or exported as a statement; harmless ones (LANG, LC_*, TZ, NO_COLOR, TERM,
 * COLUMNS…) do not.
 */
type Row = [command: string, expect: Decision, mode?: PermissionMode];
const rows = (list: Row[]): BashCase[] => list.map(([command, expect, mode]) => ({ group: 'env-assignments', command, expect, ...(mode ? { mode } : {}) }));

const CASES: Row[] = [
  ['RIPGREP_CONFIG_PATH=src/rc rg x', 'ask'],
  ['RIPGREP_CONFIG_PATH=src/rc rg x', 'deny', 'dontAsk'],
  ['MAGIC=/etc/passwd file src/a.ts', 'ask'],
  ['MAGIC=/etc/passwd file src/a.ts', 'deny', 'dontAsk'],
  ['PAGER=sh git log', 'ask'],
  ['GIT_PAGER=cat git log', 'ask'],
  ['GIT_DIR=../outside git log', 'ask'],
  ["GIT_CONFIG_PARAMETERS=\"'core.pager=sh'\" git log", 'ask'],
  ["LESSOPEN='|sh %s' cat src/a.ts", 'ask'],
  ['TZDIR=/etc date', 'ask'],
  ['LD_PRELOAD=x.so cat src/a.ts', 'ask'],
  ['POSIXLY_CORRECT=1 head src/a.ts -n /etc/passwd', 'ask'],
  ['GREP_OPTIONS=-r grep x src', 'ask'],
  ['HOME=/tmp git log', 'ask'],
  ['XDG_CONFIG_HOME=src git status', 'ask'],
  ['TMPDIR=. sort src/a.ts', 'ask'],
  ['PYTHONPATH=x cat src/a.ts', 'ask'],
  ['FOO=1 ls src', 'ask'],
  ['env RIPGREP_CONFIG_PATH=src/rc rg x', 'ask'],
  ["env -S'RIPGREP_CONFIG_PATH=src/rc rg x'", 'ask'],
  ['export RIPGREP_CONFIG_PATH=src/rc; rg x src', 'ask'],
  ['RIPGREP_CONFIG_PATH=src/rc; export RIPGREP_CONFIG_PATH; rg x src', 'ask'],
  ['RIPGREP_CONFIG_PATH=src/rc; rg x src', 'ask'],
  ['declare -x MAGIC=/etc/passwd; file src/a.ts', 'ask'],
  ['typeset -x RIPGREP_CONFIG_PATH=src/rc; rg x', 'ask'],
  ['export foo=1; ls src', 'ask'],
  ['LANG=C ls src', 'allow'],
  ['LANG=C LC_ALL=C.UTF-8 sort src/a.ts', 'allow'],
  ['TERM=dumb COLUMNS=80 ls -C src', 'allow'],
  ['TZ=UTC date +%H', 'allow'],
  ['NO_COLOR=1 rg x src', 'allow'],
  ['env LANG=C ls src', 'allow'],
  ['env -u RIPGREP_CONFIG_PATH rg x src', 'allow'],
  ['env -i rg x src', 'allow'],
  ['export LANG=C; ls src', 'allow'],
  ['rc=src/rc; rg x src', 'allow'],
  ['LANG=C git status', 'allow'],
];

export const ENV_GROUPS: CorpusGroup[] = [
  {
    name: 'environment assignments with no Bash rule',
    settings: { permissions: {} },
    bash: [
      ...rows(CASES),
      // rg reads its config from RIPGREP_CONFIG_PATH: `--pre=sh` there runs every file searched.
      {
        group: 'env-assignments',
        command: 'RIPGREP_CONFIG_PATH=src/rc rg x',
        expect: 'ask',
        realBash: { setup: "printf -- '--pre=sh\\n' > src/rc; echo 'touch PWNED' > src/x.txt", proves: 'test -e PWNED' },
      },
    ],
  },
  {
    // Found by the composition property test: a wrapper or an assignment prefix hid an assignment
    // builtin (or an assignment after `time`) from the analysis. With a specific deny rule in the
    // settings, what cannot be checked asks even in bypassPermissions.
    name: 'assignments behind wrappers',
    bash: [
      ...(
        [
          ['time declare -x LD_PRELOAD=/tmp/x; ls', 'ask', 'bypassPermissions'],
          ['command declare -x LD_PRELOAD=/tmp/x; ls', 'ask', 'bypassPermissions'],
          ['FOO=1 declare -x LD_PRELOAD=/tmp/x; ls', 'ask', 'bypassPermissions'],
          ['time LD_PRELOAD=/tmp/x.so ls', 'ask', 'bypassPermissions'],
          ['time PATH=/tmp; git status', 'ask', 'bypassPermissions'],
          ['time export PATH=/tmp; git status', 'ask', 'bypassPermissions'],
          ['nice -n 5 typeset -x BASH_ENV=src/x; ls', 'ask', 'bypassPermissions'],
          ['time readonly IFS=/; ls', 'ask', 'bypassPermissions'],
          ['command local PATH=/tmp', 'ask', 'bypassPermissions'],
          ['time declare -x $NAME=1; ls', 'ask', 'bypassPermissions'],
          ['time declare -x LD_PRELOAD=/tmp/x; ls', 'deny', 'dontAsk'],
          ['time LD_PRELOAD=/tmp/x.so ls', 'ask'],
          ['time declare -x LANG=C; ls', 'allow', 'bypassPermissions'],
          ['time ls', 'allow', 'bypassPermissions'],
          ['time git status', 'allow'],
        ] as Row[]
      ).map(([command, expect, mode]) => ({ group: 'env-assignments', command, expect, ...(mode ? { mode } : {}) })),
      // Real bash does export the variable to the next command.
      { group: 'env-assignments', command: 'time declare -x KEEL_PROBE=1; env > env.txt', expect: 'ask', realBash: { proves: 'grep -q KEEL_PROBE=1 env.txt' } },
      { group: 'env-assignments', command: 'command declare -x KEEL_PROBE=1; env > env.txt', expect: 'ask', realBash: { proves: 'grep -q KEEL_PROBE=1 env.txt' } },
    ],
  },
];
