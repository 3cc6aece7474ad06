import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import workerThreads from 'node:worker_threads';
import { afterAll, afterEach } from 'vitest';

/**
 * The unit project's promise: pure logic, fast. A unit test starts no process (no real bash,
 * git, rg, bwrap, node, MCP server over stdio), listens on no socket (no HTTP server, no fake
 * model server, no Unix socket) and starts no worker thread. Those tests belong in the
 * "integration" project (the list in test/integration-files.txt), which `npm test` runs as well.
 *
 * Every such call is refused here (it throws before anything starts) and fails the test that
 * made it, even when the code under test caught the error and carried on.
 */
const violations: string[] = [];

function refuse(what: string): never {
  const message = `the unit project starts no process and opens no server (${what}); put this test file in the integration project (test/integration-files.txt)`;
  violations.push(message);
  throw new Error(message);
}

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Reflect.set(childProcess, name, (file: unknown) => refuse(`child_process.${name}(${typeof file === 'string' ? file : '…'})`));
}
net.Server.prototype.listen = function listen(): never {
  return refuse('a server listening');
};
Reflect.set(workerThreads, 'Worker', function Worker(): never {
  return refuse('a worker thread');
});
// ESM named imports of builtins (`import { spawn } from 'node:child_process'`) see the patched functions too.
syncBuiltinESMExports();

/**
 * Runs `fn`, which must try to start a process or a server; returns the refusal's message and
 * forgets the refusal (so the calling test does not fail). For the guard's own test.
 */
export function refusalOf(fn: () => unknown): string | null {
  const before = violations.length;
  try {
    fn();
  } catch {
    /* the refusal, recorded below */
  }
  return violations.splice(before)[0] ?? null;
}

function check(): void {
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(found[0]);
}

afterEach(check);
afterAll(check);
