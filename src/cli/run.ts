import { existsSync, statSync } from 'node:fs';
import type { InspectionEvent } from 'xstate';
import type { TaskEvent } from '../shared/domain/events';
import { AppLifetime } from '../core/machines/appSession/appLifetime';
import type { McpHub } from '../core/mcp/hub';
import { FollowUpRequired, type TaskHandle } from '../core/runtime/types';
import { TaskStore } from '../core/store/taskStore';
import { StoreError } from '../core/store/types';
import { parseRunArgs, providerFor, type RunArgs } from './args';
import { createCliRuntime, type CliRuntime } from './cliRuntime';
import { openCliTrust } from './cliTrust';
import type { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { RUN_HELP } from './help';
import { mayHaveMcpServers } from './mcp/presence';
import type { McpReport } from './mcp/host';
import { EXIT_BUDGET_REACHED, EXIT_STORAGE_UNUSABLE, STORAGE_HINT } from './exitCodes';
import { usd } from '../core/machines/turn/budget';
import { handleSignals, signalExitCode } from './signals';
import { TextRenderer } from './textRenderer';
import { HelpRequested, reportUsage, UsageError } from './usage';
import { cliContentGate } from './contentGate';
import { slashForRun } from './slashRun';
import type { CommandRun, StartTaskOptions } from '../core/runtime/types';
import type { AttachedImage } from '../core/machines/task/task.machine';
import { readPromptImage, tooManyImages } from '../core/context/promptImages';

/**
 * `keel run`: starts one task (or, with --resume, continues a stored one), streams its events,
 * exits when it settles. Every task is recorded under --storage. The run's lifetime is the
 * appSession machine (init: arguments and storage; auth: the provider's key; active: the task;
 * saving: unsettled tasks recorded as interrupted; exit), which every path ends in: a settled
 * task, a startup failure, an exception, SIGTERM or Ctrl+C.
 */
export async function runCommand(argv: string[], options: { inspect?(event: InspectionEvent): void } = {}): Promise<number> {
  let prepared: Promise<RunSetup> | undefined;
  let cli: CliRuntime | undefined;
  let mcpHub: McpHub | undefined;
  let trust: WorkspaceTrust | undefined;
  let stoppedBy: NodeJS.Signals | undefined;
  let interrupted: string[] = [];
  const app = new AppLifetime(
    {
      loadSettings: async () => {
        prepared = prepareRun(argv);
        return { provider: (await prepared).args.provider.provider };
      },
      checkAuth: async () => {
        const problem = (await prepared)?.keyProblem;
        if (problem) throw new Error(problem);
      },
      save: () => {
        // Whatever has not settled (a signal stopped it) is recorded as interrupted, then the logs close.
        interrupted = cli?.runtime.interruptAll() ?? [];
        const activityClosed = cli?.dispose();
        // The MCP servers end after the task that used them (their processes stopped, sessions closed).
        return Promise.all([activityClosed, mcpHub?.dispose()]).then(() => trust?.dispose());
      },
    },
    { provider: 'anthropic', ...(options.inspect ? { inspect: options.inspect } : {}) },
  );
  app.start();
  try {
    let setup: RunSetup;
    try {
      setup = await prepared!;
    } catch (err) {
      // The session ends at init (nothing ran, nothing to save), not through saving: let it get there first.
      await app.ready();
      return startupFailure(err);
    }
    const { args, taskId, images } = setup;
    // The key is checked before the task starts; a missing one is reported by the task itself (no_api_key).
    await app.ready();
    // What the workspace provides is used only as the person approved it; what is held back is said now.
    try {
      trust = await openCliTrust(args);
    } catch (err) {
      return storeFailure(err);
    }
    // `/name args`: a custom command becomes the prompt (with its allowed-tools and model); a
    // built-in that only tells something prints it; one that cannot run sends nothing.
    let command: CommandRun | undefined;
    // What the person typed: the message as shown (and the task's title) when what is sent is not that.
    const typed = args.prompt;
    if (args.prompt.trim().startsWith('/')) {
      const { gate, approveHint } = cliContentGate(trust, args.workspace, args.storage);
      let slash;
      try {
        slash = await slashForRun(args, gate, approveHint, (line) => process.stderr.write(line), trust);
      } catch (err) {
        return storeFailure(err);
      }
      if (slash.kind === 'usage') return reportUsage('run', new UsageError(slash.message));
      if (slash.kind === 'printed') {
        process.stdout.write(`${slash.lines.join('\n')}\n`);
        return 0;
      }
      args.prompt = slash.prompt;
      command = slash.command;
    }
    // The MCP SDK is loaded only when some server may be configured (it costs start-up time).
    // What becomes of each server is reported as it happens: on stderr, and in stream-json as
    // `mcp` lines (held until the task, whose id they carry, exists).
    const mcpLines = new McpLines(args.outputFormat === 'stream-json' ? (line) => process.stdout.write(line) : null);
    const warnLine = (line: string) => process.stderr.write(line);
    const mcp = mayHaveMcpServers(args, process.env)
      ? (await import('./mcp/host')).cliMcpHub(args.workspace, args.mcpConfig, process.env, warnLine, trust, args.storage, (r) => mcpLines.add(r))
      : {};
    if (mcp.error) return reportUsage('run', new UsageError(mcp.error));
    mcpHub = mcp.hub;
    // The task runtime with the settings files' pass-env and sandbox, and the process's hooks,
    // status board and status socket (cliRuntime.ts, shared with `keel loop`).
    try {
      cli = await createCliRuntime(args, 'keel run', mcpHub, trust);
    } catch (err) {
      return storeFailure(err);
    }
    const { runtime } = cli;
    const options: Omit<StartTaskOptions, 'prompt'> = {
      provider: providerFor(args, cli.mode),
      mode: cli.mode,
      ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}),
      ...(command ? { command } : {}),
      ...(images.length ? { images } : {}),
      ...(args.maxBudgetUsd !== undefined ? { maxBudgetUsd: args.maxBudgetUsd } : {}),
    };
    // `@server:uri` resources and a leading `/mcp__server__prompt` become what the model reads.
    let prompt = args.prompt;
    if (mcpHub && prompt) {
      const expanded = await (await import('../core/mcp/references')).expandMcpReferences(prompt, mcpHub, mcpHub.limits.maxOutputTokens, new AbortController().signal);
      for (const note of expanded.notes) process.stderr.write(`keel: MCP ${note}\n`);
      prompt = expanded.text;
    }
    if (prompt !== typed) options.typed = typed;
    let task: TaskHandle;
    try {
      task = taskId ? await runtime.resume(taskId, { ...options, ...(prompt ? { followUp: prompt } : {}) }) : runtime.startTask({ prompt, ...options });
    } catch (err) {
      return storeFailure(err);
    }
    app.watch(task);
    const write = (line: string) => process.stdout.write(line);
    const text = new TextRenderer(write, (line) => process.stderr.write(line));
    // In text mode the id is not in the output: say it first, so the task can be found and continued.
    if (args.outputFormat === 'text') process.stderr.write(`keel run: ${taskId ? 'continuing ' : ''}task ${task.id}\n`);
    let cancelledBy: 'Ctrl+C' | undefined;
    const onEvent = (e: TaskEvent) => (args.outputFormat === 'stream-json' ? write(`${JSON.stringify(e)}\n`) : text.render(e));
    const unsubscribe = task.subscribe(onEvent);
    mcpLines.start(task.id);

    const unhandle = handleSignals({
      cancel: () => {
        cancelledBy = 'Ctrl+C';
        task.cancel();
      },
      interrupt: (signal) => {
        stoppedBy = signal;
        // Saving runs inside this call (AppLifetime.exit): the task is recorded as interrupted, and
        // its `task interrupted` event printed, before it returns.
        void app.exit();
        unsubscribe();
        text.finish();
        if (interrupted.includes(task.id)) process.stderr.write(`keel run: ${signal}: task ${task.id} stopped and recorded as interrupted; continue it with: keel run --resume ${task.id}\n`);
      },
    });
    try {
      const done = await Promise.race([task.settled(), app.exited.then(() => undefined)]);
      if (!done) return signalExitCode(stoppedBy);
      // Sub-agents of a cancelled (or failed) parent were cancelled with it: let them settle.
      await cli?.runtime.settleAll(SUBTASKS_SETTLE_MS);
      // A run is a success only once its record is saved: a record that failed (a full disk, a
      // removed folder) ends the run failed with exit 3, said on stderr in every output format.
      const unsaved = await task.recorded?.().then(
        () => null,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      text.finish();
      if (unsaved) {
        if (args.outputFormat === 'stream-json') process.stderr.write(`keel run: task ${task.id} failed: ${unsaved}\n`);
        return EXIT_STORAGE_UNUSABLE;
      }
      // A failed task waits for the user (awaitingUser, recorded as failed): `done` is the last
      // event of the run, and `keel run --resume ID "<follow-up>"` continues it later. The answer
      // so far ended its line above; stderr says how it ended and how to go on, as after SIGTERM.
      // Paused at its budget: a limit reached, not a goal; a higher cap continues it where it stopped.
      if (task.transcript().tags.includes('budgetReached')) {
        const budget = task.transcript().budget;
        const figures = budget?.capUsd != null ? ` (spent ${usd(budget.spentUsd)} of ${usd(budget.capUsd)})` : '';
        const how = `continue it with a higher cap: keel run --resume ${task.id} --max-budget-usd N`;
        process.stderr.write(`keel run: task ${task.id} paused at its budget${figures} before a request that could go over it; ${how}\n`);
        return EXIT_BUDGET_REACHED;
      }
      if (done.status !== 'completed') {
        const how = done.status === 'aborted' ? `${cancelledBy ? `${cancelledBy}: ` : ''}task ${task.id} cancelled` : `task ${task.id} ${done.status}`;
        process.stderr.write(`keel run: ${how}; continue it with: keel run --resume ${task.id} "<follow-up>"\n`);
      }
      return done.status === 'completed' ? 0 : 1;
    } finally {
      unhandle();
      unsubscribe();
    }
  } finally {
    await app.exit();
    // Saving disposed the runtime (which starts the pool's shutdown); wait until every worker is gone.
    await cli?.runtime.shutdownWorkers();
  }
}

/**
 * The `mcp` lines of `--output-format stream-json` (McpReport with `type` and `taskId`): what is
 * reported before the task exists waits for its id; none are written in text mode (stderr has them).
 */
class McpLines {
  private taskId: string | null = null;
  private readonly held: McpReport[] = [];

  constructor(private readonly write: ((line: string) => void) | null) {}

  add(r: McpReport): void {
    if (!this.write) return;
    if (this.taskId === null) this.held.push(r);
    else this.write(`${JSON.stringify({ type: 'mcp', taskId: this.taskId, ...r })}\n`);
  }

  start(taskId: string): void {
    this.taskId = taskId;
    for (const r of this.held.splice(0)) this.add(r);
  }
}

/** How long `keel run` waits, after its task settled, for cancelled sub-agents to settle before it exits. */
const SUBTASKS_SETTLE_MS = 15_000;

/** What `keel run` starts from: its arguments, the stored task it resumes, and what its provider lacks. */
interface RunSetup {
  args: RunArgs;
  /** With --resume: the full id of the stored task. */
  taskId: string | undefined;
  /** Why the provider cannot be used (a missing key), if it cannot. */
  keyProblem: string | undefined;
  /** The `--image` files, read and checked. */
  images: AttachedImage[];
}

/** A run that ends before it starts (its message is already printed) and its exit status: 0 after --help, else a failure's. */
class StartupFailure extends Error {
  constructor(readonly exitCode: number) {
    super(`keel run could not start (exit ${exitCode})`);
  }
}

/**
 * Parses the arguments and makes sure the run can be recorded and has a workspace, before any
 * request. Prints what is wrong and throws StartupFailure with the exit status.
 */
async function prepareRun(argv: string[]): Promise<RunSetup> {
  let args: RunArgs;
  try {
    args = parseRunArgs(argv, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(RUN_HELP);
      throw new StartupFailure(0);
    }
    if (err instanceof UsageError) throw new StartupFailure(reportUsage('run', err));
    throw err;
  }
  // The run is recorded: a storage path that cannot hold it fails now, before any request.
  const store = new TaskStore(args.storage);
  try {
    store.prepare();
  } catch (err) {
    throw new StartupFailure(storeFailure(err));
  }
  let taskId: string | undefined;
  if (args.resume) {
    // A resumed task works in its own workspace with its own model unless told otherwise.
    try {
      taskId = store.resolveId(args.resume);
      const meta = await store.readMeta(taskId);
      if (!args.workspaceGiven && meta.workspace) args.workspace = meta.workspace;
      if (!args.modelGiven && meta.model && (!meta.provider || meta.provider === args.provider.provider)) {
        args.models = { ...args.models, other: meta.model };
        args.provider = providerFor(args, args.mode);
      }
    } catch (err) {
      throw new StartupFailure(storeFailure(err));
    }
  }
  if (!existsSync(args.workspace) || !statSync(args.workspace).isDirectory()) {
    throw new StartupFailure(reportUsage('run', new UsageError(`the workspace ${args.workspace} is not a folder`)));
  }
  const keyProblem = args.provider.provider === 'anthropic' && !args.provider.apiKey ? 'no Anthropic API key: set ANTHROPIC_API_KEY, or use --provider demo' : undefined;
  // Images are checked before any request: a wrong one is a usage error and nothing is sent.
  const images: AttachedImage[] = [];
  const tooMany = tooManyImages(args.images.length);
  if (tooMany) throw new StartupFailure(reportUsage('run', new UsageError(tooMany)));
  for (const file of args.images) {
    const read = readPromptImage(file);
    if (!read.ok) throw new StartupFailure(reportUsage('run', new UsageError(read.problem)));
    images.push(read.image);
  }
  return { args, taskId, keyProblem, images };
}

/** The exit status of a run that could not start: printed already when it is a StartupFailure. */
function startupFailure(err: unknown): number {
  if (err instanceof StartupFailure) return err.exitCode;
  throw err;
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
