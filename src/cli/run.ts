import { existsSync, statSync } from 'node:fs';
import type { TaskEvent } from '../shared/domain/events';
import { TaskRuntime } from '../core/runtime/taskRuntime';
import type { TaskHandle } from '../core/runtime/types';
import { TaskStore } from '../core/store/taskStore';
import { StoreError } from '../core/store/types';
import { parseRunArgs, UsageError, type RunArgs } from './args';
import { HELP } from './help';
import { mayHaveMcpServers } from './mcpPresence';
import { TextRenderer } from './textRenderer';

/**
 * `keel run`: starts one task (or, with --resume, continues a stored one), streams its events,
 * exits when it settles. Every task is recorded under --storage.
 */
export async function runCommand(argv: string[]): Promise<number> {
  let args: RunArgs;
  try {
    args = parseRunArgs(argv, process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`keel run: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  let taskId: string | undefined;
  if (args.resume) {
    // A resumed task works in its own workspace with its own model unless told otherwise.
    try {
      const store = new TaskStore(args.storage);
      taskId = store.resolveId(args.resume);
      const meta = await store.readMeta(taskId);
      if (!args.workspaceGiven && meta.workspace) args.workspace = meta.workspace;
      if (!args.modelGiven && meta.model && (!meta.provider || meta.provider === args.provider.provider)) args.provider = { ...args.provider, model: meta.model };
    } catch (err) {
      return storeFailure(err);
    }
  }
  if (!existsSync(args.workspace) || !statSync(args.workspace).isDirectory()) {
    process.stderr.write(`keel run: the workspace ${args.workspace} is not a folder\n`);
    return 2;
  }
  // The MCP SDK is loaded only when some server may be configured (it costs start-up time).
  const mcp = mayHaveMcpServers(args, process.env) ? (await import('./mcpHost')).cliMcpHub(args.workspace, args.mcpConfig, process.env, (line) => process.stderr.write(line)) : {};
  if (mcp.error) {
    process.stderr.write(`keel run: ${mcp.error}\n`);
    return 2;
  }
  const runtime = new TaskRuntime({
    ...(mcp.hub ? { mcp: mcp.hub } : {}),
    workspace: args.workspace,
    storageDir: args.storage,
    ownerLabel: 'keel run',
    log: (level, message) => {
      if (level !== 'info') process.stderr.write(`keel: ${message}\n`);
    },
  });
  const options = { provider: args.provider, mode: args.mode, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) };
  let task: TaskHandle;
  try {
    task = taskId ? await runtime.resume(taskId, { ...options, ...(args.prompt ? { followUp: args.prompt } : {}) }) : runtime.startTask({ prompt: args.prompt, ...options });
  } catch (err) {
    runtime.dispose();
    await mcp.hub?.dispose();
    return storeFailure(err);
  }
  const write = (line: string) => process.stdout.write(line);
  const text = new TextRenderer(write, (line) => process.stderr.write(line));
  const onEvent = (e: TaskEvent) => (args.outputFormat === 'stream-json' ? write(`${JSON.stringify(e)}\n`) : text.render(e));
  const unsubscribe = task.subscribe(onEvent);

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    task.cancel();
  };
  process.on('SIGINT', onSigint);
  try {
    const done = await task.settled();
    if (done.status === 'failed') {
      // Headless there is nobody to press Retry: the task ends failed.
      task.abandon();
    }
    text.finish();
    return done.status === 'completed' ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    unsubscribe();
    runtime.dispose();
    await mcp.hub?.dispose();
  }
}

/** Prints a store failure for people; 2 for an id that names no task, else 1. */
function storeFailure(err: unknown): number {
  if (err instanceof StoreError) {
    process.stderr.write(`keel run: ${err.message}\n`);
    return err.code === 'not_found' || err.code === 'ambiguous' ? 2 : 1;
  }
  if (err instanceof Error) {
    process.stderr.write(`keel run: ${err.message}\n`);
    return 1;
  }
  throw err;
}
