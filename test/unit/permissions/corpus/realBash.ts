import { spawnSync } from 'node:child_process';
import { detectSandbox } from '../../../../src/core/sandbox/bwrap';
import { makeFixture } from '../fixture';
import type { CorpusGroup, RealBashCheck } from './types';

export interface RealBashOutcome {
  /** Exit status of `proves` (0: the effect happened). */
  proved: number | null;
  /** What the command printed (stdout and stderr), for failure messages. */
  output: string;
}

/** Whether `program` is a bash builtin, keyword or a command on PATH. */
function programOnPath(program: string): boolean {
  return spawnSync('bash', ['-c', 'command -v -- "$1" >/dev/null', 'bash', program], { stdio: 'ignore' }).status === 0;
}

/** Whether real-bash checks can run here (bubblewrap works). */
export function realBashAvailable(): boolean {
  return detectSandbox().available;
}

/**
 * Runs `command` as the Bash tool would (`bash -c command`, in the workspace) in a fresh fixture
 * prepared like the group's, inside bubblewrap: `/` read-only, only the fixture's folder writable,
 * no network, its own pid namespace. Then runs the check's `proves` (with `$OUT` naming a file
 * that holds the command's output). Never touches anything outside the throwaway fixture.
 */
export async function runRealBash(group: CorpusGroup, command: string, check: RealBashCheck): Promise<RealBashOutcome> {
  const avail = detectSandbox();
  if (!avail.available) throw new Error(`real-bash checks need bubblewrap: ${avail.reason}`);
  const program = command.trim().split(/[\s;|&]/)[0] ?? '';
  if (/^[a-z][a-z0-9_.-]*$/.test(program) && !programOnPath(program)) {
    throw new Error(`this check runs \`${program}\`, which is not installed here: scripts/e2e/ensure-deps.sh installs every program the tests run (add its Debian package to APT_PACKAGES there)`);
  }
  const fx = await makeFixture(group.settings, group.protectedFiles ? { protectedFiles: group.protectedFiles } : {});
  try {
    group.prepare?.(fx);
    const out = `${fx.root}/.real-bash-output`;
    const script = [
      'cd "$KEEL_WS" || exit 97',
      'eval "$KEEL_SETUP" >/dev/null 2>&1',
      'bash -c "$KEEL_CMD" >"$OUT" 2>&1 </dev/null',
      'cd "$KEEL_WS" || exit 97',
      'eval "$KEEL_PROVES"',
    ].join('\n');
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', fx.root, fx.root, '--unshare-net', '--unshare-pid', '--die-with-parent', '--chdir', fx.ws, '/bin/bash', '-c', script];
    const r = spawnSync(avail.bwrap, args, {
      encoding: 'utf8',
      timeout: 15_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.home, KEEL_WS: fx.ws, KEEL_SETUP: check.setup ?? '', KEEL_CMD: command, KEEL_PROVES: check.proves, OUT: out, LANG: 'C' },
    });
    let output = '';
    try {
      output = (await import('node:fs')).readFileSync(out, 'utf8');
    } catch {
      output = r.stderr ?? '';
    }
    return { proved: r.status, output };
  } finally {
    fx.cleanup();
  }
}
