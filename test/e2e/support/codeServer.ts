/**
 * code-server as a child process for e2e tests: finding the binary (via scripts/e2e/ensure-deps.sh),
 * installing a .vsix into a profile, and running the server in its own process group so that
 * stopping it also stops the `fileWatcher` and extension-host children it leaves behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (this file is test/e2e/support/codeServer.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let cachedBinary: string | undefined;

/**
 * Absolute path of the code-server binary. Runs scripts/e2e/ensure-deps.sh once per process
 * (about a second when everything is installed; about a minute and a half on a fresh machine).
 * Throws with the script's output when it fails.
 */
export function codeServerBinary(): string {
  if (cachedBinary !== undefined) return cachedBinary;
  const result = spawnSync('bash', [join(REPO_ROOT, 'scripts/e2e/ensure-deps.sh')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status !== 0) {
    throw new Error(`scripts/e2e/ensure-deps.sh failed (${result.status ?? result.signal}):\n${result.stderr}${result.stdout}`);
  }
  const lines = result.stdout.trim().split('\n');
  const last = lines[lines.length - 1]?.trim();
  if (!last) throw new Error(`scripts/e2e/ensure-deps.sh printed no binary path:\n${result.stderr}`);
  cachedBinary = last;
  return last;
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/** The child environment: the parent's, minus real API keys, plus `extra`. */
export function childEnv(extra: Record<string, string>, xdgRoot: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A developer's real key must never reach a test VS Code by accident; tests pass fake ones.
  delete env.ANTHROPIC_API_KEY;
  delete env.OPENAI_API_KEY;
  // Variables of an enclosing VS Code terminal would confuse code-server's CLI.
  for (const key of Object.keys(env)) if (key.startsWith('VSCODE_')) delete env[key];
  // code-server writes ~/.config/code-server/config.yaml on first run; keep that in the temp dir.
  env.XDG_CONFIG_HOME = join(xdgRoot, 'config');
  env.XDG_DATA_HOME = join(xdgRoot, 'data');
  return { ...env, ...extra };
}

/**
 * Installs a .vsix into the given profile with `code-server --install-extension`.
 * Throws with code-server's output if it exits non-zero or does not report success.
 */
export function installExtension(binary: string, vsixPath: string, userDataDir: string, extensionsDir: string, env: NodeJS.ProcessEnv): string {
  const result = spawnSync(
    binary,
    ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsixPath, '--force'],
    { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 },
  );
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 || !/successfully installed/i.test(output)) {
    throw new Error(`installing ${vsixPath} failed (${result.status ?? result.signal}):\n${output}`);
  }
  return output;
}

/** A running code-server. */
export interface CodeServerProcess {
  readonly port: number;
  readonly pid: number;
  /** Everything code-server printed so far (stdout and stderr interleaved). */
  output(): string;
  /** Stops the whole process group: SIGTERM, then SIGKILL after `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<number>();
process.once('exit', () => {
  // Last resort when a test run is aborted: never leave a code-server group behind.
  for (const pgid of live) killGroup(pgid, 'SIGKILL');
});

/** Sends `signal` to the process group; false when the group no longer exists. Signal 0 only probes. */
function killGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty
  }
}

function groupAlive(pgid: number): boolean {
  return killGroup(pgid, 0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface StartCodeServerOptions {
  binary: string;
  userDataDir: string;
  extensionsDir: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** How long to wait for HTTP readiness (default 60 s). */
  readyTimeoutMs?: number;
  /** Keep VS Code's Workspace Trust on (default off: `--disable-workspace-trust`). */
  workspaceTrust?: boolean;
}

/**
 * Starts code-server detached (its own process group) on a free loopback port and resolves once
 * `GET /healthz` answers. Rejects (after stopping it) if it exits or does not become ready.
 */
export async function startCodeServer(opts: StartCodeServerOptions): Promise<CodeServerProcess> {
  const port = await freePort();
  const args = [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--user-data-dir', opts.userDataDir,
    '--extensions-dir', opts.extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    ...(opts.workspaceTrust ? [] : ['--disable-workspace-trust']),
    opts.workspace,
  ];
  const child: ChildProcess = spawn(opts.binary, args, { detached: true, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error('code-server did not start');
  live.add(pid);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));

  let stopped: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> => {
    stopped ??= (async () => {
      killGroup(pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while (groupAlive(pid) && Date.now() < deadline) await sleep(100);
      if (groupAlive(pid)) killGroup(pid, 'SIGKILL');
      while (groupAlive(pid)) await sleep(50);
      live.delete(pid);
    })();
    return stopped;
  };

  const proc: CodeServerProcess = { port, pid, output: () => out, stop };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited !== undefined) {
      await stop();
      throw new Error(`code-server ${exited} before it was ready:\n${out}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return proc;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server was not ready on port ${port}:\n${out}`);
    }
    await sleep(200);
  }
}
