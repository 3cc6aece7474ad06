import { workerCommand } from './worker';

/**
 * `dist/worker.js`: the worker process of a pool, bundled on its own (scripts/build.mjs) so an
 * idle worker loads only what running a query needs — not the CLI's commands, the MCP SDK or the
 * store's readers. The same code as `keel worker` (src/cli/worker.ts), same arguments:
 * `node dist/worker.js --worker-id ID`, its channel to the host on fd 3. Exit codes: 0 after `shutdown` or when the
 * host closed the connection, 1 when the host broke the protocol, 2 on bad usage.
 */
workerCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`keel worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
