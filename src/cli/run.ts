import { existsSync, statSync } from 'node:fs';
import type { TaskEvent } from '../shared/domain/events';
import { TaskRuntime } from '../core/runtime/taskRuntime';
import { loadSandboxSettings } from '../core/sandbox/settings';
import { readUserPassEnv } from '../core/security/passEnv';
import { FollowUpRequired, type TaskHandle } from '../core/runtime/types';
import { TaskStore } from '../core/store/taskStore';
import type { WorkerCommand } from '../core/workers/spawnWorker';
import { StoreError } from '../core/store/types';
import { cliAdvice } from './advice';
import { parseRunArgs, type RunArgs } from './args';
import { HELP } from './help';
import { EXIT_STORAGE_UNUSABLE, STORAGE_HINT } from './exitCodes';
import { handleSignals } from './signals';
import { TextRenderer } from './textRenderer';
import { HelpRequested, reportUsage, UsageError } from './usage';

/**
 * `keel run`: starts one task (or, with --resume, continues a stored one), streams its events,
 * exits when it settles. Every task is recorded under --storage.
 */
export async function runCommand(argv: string[]): Promise<number> {
  let args: RunArgs;
  try {
    args = parseRunArgs(argv, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('run', err);
    throw err;
  }
  // The run is recorded: a storage path that cannot hold it fails now, before any request.
  const store = new TaskStore(args.storage);
  try {
    store.prepare();
  } catch (err) {
    return storeFailure(err);
  }
  let taskId: string | undefined;
  if (args.resume) {
    // A resumed task works in its own workspace with its own model unless told otherwise.
    try {
      taskId = store.resolveId(args.resume);
      const meta = await store.readMeta(taskId);
      if (!args.workspaceGiven && meta.workspace) args.workspace = meta.workspace;
      if (!args.modelGiven && meta.model && (!meta.provider || meta.provider === args.provider.provider)) args.provider = { ...args.provider, model: meta.model };
    } catch (err) {
      return storeFailure(err);
    }
  }
  if (!existsSync(args.workspace) || !statSync(args.workspace).isDirectory()) {
    return reportUsage('run', new UsageError(`the workspace ${args.workspace} is not a folder`));
  }
  // Variables passed to tool processes: --pass-env, and passEnv in ~/.keel/settings.json (never
  // a project's own files: a cloned repository must not be able to ask for the keys).
  const userPassEnv = readUserPassEnv();
  for (const p of userPassEnv.problems) process.stderr.write(`keel: ${p}\n`);
  // The Bash sandbox from the settings files' `sandbox` sections (a project may only tighten it).
  const sandbox = loadSandboxSettings({ workspace: args.workspace });
  for (const p of sandbox.problems) process.stderr.write(`keel: sandbox settings: ${p}\n`);
  const runtime = new TaskRuntime({
    workspace: args.workspace,
    passEnv: [...new Set([...args.passEnv, ...userPassEnv.names])],
    sandbox: sandbox.settings,
    storageDir: args.storage,
    ownerLabel: 'keel run',
    advise: cliAdvice,
    // --workers N: each turn loop runs in a worker process started from this same CLI bundle.
    ...(args.workers > 0 ? { workers: { command: cliWorkerCommand(), max: args.workers } } : {}),
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
    return storeFailure(err);
  }
  const write = (line: string) => process.stdout.write(line);
  const text = new TextRenderer(write, (line) => process.stderr.write(line));
  const onEvent = (e: TaskEvent) => (args.outputFormat === 'stream-json' ? write(`${JSON.stringify(e)}\n`) : text.render(e));
  const unsubscribe = task.subscribe(onEvent);

  const unhandle = handleSignals({
    cancel: () => task.cancel(),
    interrupt: (signal) => {
      const ids = runtime.interruptAll();
      unsubscribe();
      text.finish();
      if (ids.includes(task.id)) process.stderr.write(`keel run: ${signal}: task ${task.id} stopped and recorded as interrupted; continue it with: keel run --resume ${task.id}\n`);
    },
  });
  try {
    // A failed task waits for the user (awaitingUser, recorded as failed): `done` is the last
    // event of the run, and `keel run --resume ID "<follow-up>"` continues it later.
    const done = await task.settled();
    text.finish();
    return done.status === 'completed' ? 0 : 1;
  } finally {
    unhandle();
    unsubscribe();
    runtime.dispose();
    await runtime.shutdownWorkers();
  }
}

/** The worker command of a CLI host: this bundle's `worker` subcommand, on this Node. */
export function cliWorkerCommand(): WorkerCommand {
  return { command: process.execPath, args: [process.argv[1] ?? 'keel', 'worker'] };
}

/** Prints a store failure for people; 2 for an id that names no task or a missing follow-up, 3 when the storage cannot record the run, else 1. */
function storeFailure(err: unknown): number {
  if (err instanceof FollowUpRequired) return reportUsage('run', new UsageError(`${err.message}: keel run --resume ${err.taskId} "<follow-up>"`));
  if (err instanceof StoreError) {
    if (err.code === 'unusable') {
      process.stderr.write(`keel run: ${err.message}; ${STORAGE_HINT}\n`);
      return EXIT_STORAGE_UNUSABLE;
    }
    process.stderr.write(`keel run: ${err.message}\n`);
    return err.code === 'not_found' || err.code === 'ambiguous' ? 2 : 1;
  }
  if (err instanceof Error) {
    process.stderr.write(`keel run: ${err.message}\n`);
    return 1;
  }
  throw err;
}
