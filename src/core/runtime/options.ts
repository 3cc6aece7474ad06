import type { ActivityFeed } from '../events/activityFeed';
import type { HookRunner } from '../hooks/runner';
import type { ErrorCode, KeelError } from '../../shared/domain/errors';
import type { LockManager } from '../locks/lockManager';
import type { MemorySettings } from '../memory/settings';
import type { TurnLimits } from '../machines/turn/turn.machine';
import type { PermissionAsker } from '../permissions/gate';
import type { SandboxSettings } from '../sandbox/settings';
import type { ModelProvider, ProviderConfig } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import type { ToolRegistry } from '../tools/registry';
import type { McpToolSource } from '../mcp/toolSource';
import type { PermissionDecider } from './permissionCheck';
import type { WorkerPoolOptions } from '../workers/pool';
import type { CheckpointLimits } from '../checkpoints/recorder';
import type { ProjectContentGate } from '../commands/projectGate';
import type { WorkspaceTrust } from '../trust/workspaceTrust';

export interface TaskRuntimeOptions {
  workspace: string;
  /**
   * Project memory (src/core/memory/, docs/memory.md): search `.keel/memory/` at the start of
   * every run and let the gatekeeper save lessons after a completed one. Absent: memory is off
   * (a host turns it on with its settings; the CLI and the extension do by default). A function
   * is read at the start of every run (the extension's settings can change at any time).
   */
  memory?: MemorySettings | (() => MemorySettings);
  /** The person's home folder, for `~/.keel/KEEL.md` and `~/.claude/skills` (default os.homedir()). */
  home?: string;
  /**
   * Approves the workspace's own skills (`.claude/skills`, `.keel/skills`: repository content;
   * docs/commands.md). Default: none approved (the person's own skills need no approval).
   */
  contentGate?: ProjectContentGate;
  /**
   * The budget cap of every task started here without one of its own (docs/cli.md, "Budget"):
   * `keel.maxBudgetUsd`, `"maxBudgetUsd"` in ~/.keel/settings.json. Read when a task starts.
   */
  maxBudgetUsd?: number | (() => number | undefined);
  /**
   * The person's approvals of this workspace (docs/permissions.md, "Trust"): a workspace's allow
   * rules, additional directories, looser mode and `env`, its instructions files and committed
   * memories are used only once approved, and the files its hooks and MCP servers run are
   * protected. Absent: nothing the workspace provides that loosens or runs is used. The host owns
   * it (and disposes of it).
   */
  trust?: WorkspaceTrust;
  /**
   * Runs the configured hooks (docs/hooks.md) at the matching points of every task here. The host
   * creates it (it owns the approval of a workspace's own hooks). Without it, no hook runs.
   */
  hooks?: HookRunner;
  /**
   * Where this process's activity goes (the status board, the loop judge, the status socket):
   * every view event of every task, with its parent for a sub-agent. Optional.
   */
  feed?: ActivityFeed;
  ripgrepPath?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  asker?: PermissionAsker;
  /** Builds a provider from its config; defaults to the real ones (`loadProvider`). */
  providerFactory?: (config: ProviderConfig) => ModelProvider | KeelError | Promise<ModelProvider | KeelError>;
  tools?: ToolRegistry;
  limits?: Partial<TurnLimits>;
  locks?: LockManager;
  /**
   * The task store's root (docs/persistence.md). With it every task is recorded (event log, meta,
   * lock) and stored tasks can be listed, inspected and resumed; without it tasks live in memory.
   */
  storageDir?: string;
  /** Names this host in "running in another window or process" messages (e.g. "keel run"). */
  ownerLabel?: string;
  /** How long streamed text may wait before it is written to the log (default 250 ms). */
  flushIntervalMs?: number;
  /**
   * Decides tool calls. Default: the permission engine for `workspace` (rules from the settings
   * files, the shell parser), created on first use.
   */
  permissions?: PermissionDecider;
  /** Extra settings files for the default engine (the CLI's --settings). */
  settingsFiles?: string[];
  /**
   * Keeps Keel's keys out of tool processes and secrets out of tool output (security/). Default:
   * `SecretKeeper.fromEnvironment(process.env, passEnv)`. A provider's key is registered with it
   * when a task creates its provider; hosts register the other keys they hold (SecretStorage).
   */
  secrets?: SecretKeeper;
  /**
   * Environment variables the person chose to pass to tool processes although Keel would remove
   * them (`--pass-env`, `keel.tools.passEnv`, `passEnv` in ~/.keel/settings.json). Used only when
   * `secrets` is not given.
   */
  passEnv?: readonly string[];
  /**
   * The Bash sandbox (src/core/sandbox/): with `enabled`, commands run inside bubblewrap (Linux)
   * and reach only `network.allowedDomains`, through a proxy the runtime starts on first use and
   * closes on `dispose`. Hosts build it with `loadSandboxSettings` (settings files) plus their own.
   */
  sandbox?: SandboxSettings;
  /**
   * MCP servers' tools for every task (the host's `McpHub`, or a worker's IPC client of it). The
   * runtime never starts or stops it: the host owns it.
   */
  mcp?: McpToolSource;
  /**
   * Advice for a failure the person can fix, in this host's own terms (the extension: its
   * commands and settings; the CLI: environment variables and flags), appended to the message of
   * the task's `error` event. Core's messages state what went wrong and never name a host's
   * commands, flags or settings.
   */
  advise?: (failure: { code: ErrorCode; provider: ProviderConfig['provider']; taskId: string }) => string | undefined;
  /**
   * Run each task's turn loop in a pool of worker processes (docs/workers.md) instead of in this
   * process. The pool starts with the first query and is shut down by `dispose`. The workers get
   * the tool environment of `secrets` (no API key) unless `command.baseEnv` says otherwise.
   */
  workers?: WorkerPoolOptions;
  /**
   * Checkpoints of recorded tasks (docs/persistence.md, "Checkpoints"): the limits per file and
   * per task (defaults: 32 MB, 1 GB), or `false` for none. Tasks without a store keep none.
   */
  checkpoints?: Partial<CheckpointLimits> | false;
}
