import { ProcessActivity } from '../core/agents/processActivity';
import type { WorkspaceTrust } from '../core/trust/workspaceTrust';
import type { McpStatusSource } from '../core/mcp/events';
import type { McpToolSource } from '../core/mcp/toolSource';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WORKER_NODE_OPTIONS, workerCommandBeside, type WorkerCommand } from '../core/workers/spawnWorker';
import { checkpointSettings } from './checkpointSettings';
import { TaskRuntime } from '../core/runtime/taskRuntime';
import { loadSandboxSettings } from '../core/sandbox/settings';
import { settingsDefaultMode } from '../core/permissions/settings';
import type { PermissionMode } from '../shared/domain/permissionModes';
import { readUserPassEnv } from '../core/security/passEnv';
import { readUserMaxBudget } from '../core/runtime/budgetSetting';
import { ignoredSettingsNotices } from '../core/hooks/ignoredSettings';
import { cliAdvice } from './advice';
import type { RunArgs } from './args';
import { DEFAULT_MEMORY_SETTINGS, MEMORY_OFF } from '../core/memory/settings';
import { openCliTrust } from './cliTrust';

/**
 * The runtime of a headless run (`keel run`, `keel loop`): the task runtime with the settings
 * files' pass-env and sandbox, and the process's activity (hooks, status board, status socket).
 * What the workspace provides that loosens permissions or runs code is used only as the person
 * approved it (`keel trust approve`, or `--approve-project-hooks` here first: cliTrust.ts); what
 * is held back is said on stderr (and as a stream-json line). `mcp`: the run's MCP hub, when
 * servers are configured (its owner disposes of it). `trust`: the workspace's, when the caller
 * opened it already (for the MCP hub); else opened here.
 */
export interface CliRuntime {
  runtime: TaskRuntime;
  activity: ProcessActivity;
  /**
   * The mode tasks start in: `--mode` when given, else the settings files' `defaultMode` (a
   * workspace file may only make it stricter: permissions/defaultMode.ts), else `default`.
   */
  mode: PermissionMode;
  /** The person's approvals of the workspace. */
  trust: WorkspaceTrust;
  /** Ends the runtime and waits for its workers to stop, then ends the activity (its bus's `AppShutdown` reaches `keel events` readers first). */
  dispose(): Promise<void>;
}

export async function createCliRuntime(args: RunArgs, ownerLabel: string, mcp?: McpToolSource & McpStatusSource, opened?: WorkspaceTrust): Promise<CliRuntime> {
  const warn = (message: string) => process.stderr.write(`keel: ${message}\n`);
  const trust = opened ?? (await openCliTrust(args));
  const mode = startingMode(args, trust, warn);
  // Variables passed to tool processes: --pass-env, and passEnv in ~/.keel/settings.json (never
  // a project's own files: a cloned repository must not be able to ask for the keys).
  const userPassEnv = readUserPassEnv();
  for (const p of userPassEnv.problems) warn(p);
  // Claude Code settings Keel does not use (`model`, `statusLine`): said once, never ignored silently.
  for (const n of ignoredSettingsNotices(args.workspace)) warn(n);
  // The person's standing budget per task (a loop's: per loop), unless --max-budget-usd says otherwise.
  const userBudget = readUserMaxBudget();
  for (const p of userBudget.problems) warn(p);
  // The Bash sandbox from the settings files' `sandbox` sections (a project may only tighten it).
  const sandbox = loadSandboxSettings({ workspace: args.workspace });
  for (const p of sandbox.problems) warn(`sandbox settings: ${p}`);
  // Keel's home for this run: approvals and the status socket live beside the tasks.
  const keelHome = args.storage;
  // Hooks get the environment of tool processes, which the runtime (created next) owns.
  const late: { runtime?: TaskRuntime } = {};
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    if (level !== 'info') warn(message);
  };
  const activity = new ProcessActivity({
    workspace: args.workspace,
    keelHome,
    // The bus socket (`keel events --follow --storage DIR`) lives beside the tasks.
    storage: args.storage,
    label: ownerLabel,
    environment: () => late.runtime?.secrets.environment() ?? {},
    log,
    trust,
    // A hook held back (new, changed, or its script changed since approved): said once (cliTrust.ts).
    onUnapproved: (_hooks, items) => trust.reportHeld(items),
  });
  const runtime = new TaskRuntime({
    ...(mcp ? { mcp } : {}),
    // --workers N: each turn loop runs in a worker process started from this same CLI bundle
    // (a task that needs hooks or MCP servers still runs here: liveTask.ts).
    ...(args.workers > 0 ? { workers: { command: cliWorkerCommand(), max: args.workers } } : {}),
    workspace: args.workspace,
    trust,
    // The workspace's own skills are offered as the person approved them (keel trust approve).
    contentGate: trust,
    passEnv: [...new Set([...args.passEnv, ...userPassEnv.names])],
    sandbox: sandbox.settings,
    ...(userBudget.capUsd !== undefined ? { maxBudgetUsd: userBudget.capUsd } : {}),
    storageDir: args.storage,
    // Checkpoint limits from KEEL_CHECKPOINT_MAX_FILE_BYTES / _TASK_BYTES, or KEEL_CHECKPOINTS=off.
    checkpoints: checkpointSettings(process.env, warn),
    // Project memory unless --no-memory or KEEL_MEMORY=off (docs/memory.md).
    memory: args.memory ? DEFAULT_MEMORY_SETTINGS : MEMORY_OFF,
    ownerLabel,
    advise: cliAdvice,
    hooks: activity.hooks,
    feed: activity.feed,
    log,
  });
  late.runtime = runtime;
  await activity.start();
  // With --workers the pool is on the status socket from the start (keel workers), and its
  // workers' state changes on the bus; so are the MCP servers' (keel events --follow).
  const pool = runtime.workerPool();
  if (pool) activity.publishPool(pool);
  if (mcp) activity.publishMcp(mcp);
  return {
    runtime,
    activity,
    mode,
    trust,
    dispose: async () => {
      runtime.dispose();
      // The tasks' last writes (meta.json, fsync) and their locks' release, off the event loop.
      await runtime.closed();
      // The workers' `stopped` reach the bus before its `AppShutdown` (its last event).
      await runtime.shutdownWorkers();
      await activity.dispose();
      activity.hooks.dispose();
      if (!opened) trust.dispose();
    },
  };
}

/** `--mode` wins; else the settings files' `defaultMode`, whose ignored requests are shown. */
function startingMode(args: RunArgs, trust: WorkspaceTrust, warn: (message: string) => void): PermissionMode {
  if (args.modeGiven) return args.mode;
  const settled = settingsDefaultMode(args.workspace, trust);
  for (const n of settled.notices) warn(n);
  return settled.mode ?? args.mode;
}

/**
 * The worker command of a CLI host, on this Node: the lean `worker.js` beside this bundle
 * (dist/), or — run from a bundle without one beside it — this bundle's `worker` subcommand.
 */
export function cliWorkerCommand(): WorkerCommand {
  // The bundle's own folder (a `keel` on PATH is often a symlink to dist/cli.js; the loader resolved it).
  if (existsSync(join(__dirname, 'worker.js'))) return workerCommandBeside(__dirname, join);
  return { command: process.execPath, args: [...WORKER_NODE_OPTIONS, process.argv[1] ?? 'keel', 'worker'] };
}
