import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { HookRunner } from '../hooks/runner';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import type { ProviderConfig } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import type { WorkerPool } from '../workers/pool';
import type { QueryParams } from '../workers/protocol';
import type { RemoteHookSink } from '../workers/remoteTurn';
import type { TaskRuntimeOptions } from './options';
import type { TaskServices } from './wiring';
import type { CheckpointLimits } from '../checkpoints/recorder';
import type { CommandNarrowing } from '../commands/narrowing';
import type { SkillRef } from '../tools/skill';

/** What the worker side of a task's turn loop needs of the live task it runs for. */
export interface RemoteTaskSide {
  readonly id: string;
  /** The session a task and its sub-agents share (hooks' `session_id`). */
  readonly rootId: string;
  /** The task's event log (hooks' `transcript_path`), or '' when it is not recorded. */
  readonly transcriptPath: string;
  readonly loopProgressFile: string | undefined;
  /** Where the worker keeps the task's checkpoints (the task's folder), and their limits; absent: none. */
  readonly checkpoints?: { dir: string; limits: CheckpointLimits };
  /** The allowed-tools of the custom command whose run this is, if any. */
  narrowing(): CommandNarrowing | null;
  /** The skills the task may load now (the worker's Skill tool gets this list). */
  skills(): SkillRef[];
  readonly secrets: SecretKeeper;
  /** The provider settings of the task's last run (refreshed before each). */
  providerConfig(): ProviderConfig;
  /** The modes of the task's ancestors, nearest first (empty for a top-level task). */
  parentModes(): PermissionMode[];
  /** The task's own permission decision now (its rules, its mode, its ancestors). */
  decide(call: PermissionCall): Promise<EngineDecision>;
  /** A hook answered `"continue": false`: the task stops. */
  hookStop(reason: string): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/**
 * The worker side of a task's turn loop (`TaskServices.remote`): what a query carries, where the
 * worker's MCP calls and hook events come back to, and what a dead worker does to the task. A
 * sub-agent (`overflow`) may go past the pool's size.
 */
export function remoteTurnOf(task: RemoteTaskSide, pool: WorkerPool, rt: TaskRuntimeOptions, overflow: boolean): NonNullable<TaskServices['remote']> {
  return {
    pool,
    queryParts: () => queryParts(task, rt),
    parentModes: () => task.parentModes(),
    overflow,
    // The worker lists and calls the host's MCP tools through it; the host checks each call
    // again with this task's own decision (its rules, its mode now, its ancestors).
    ...(rt.mcp
      ? {
          mcp: {
            source: rt.mcp,
            decide: (call: PermissionCall) => task.decide(call),
            // Now: only a hook the worker may run (user, or approved) can allow a call there
            // without a prompt — a PreToolUse "allow" or a PermissionRequest "allow".
            get hooksMayAllow() {
              return rt.hooks?.runnable().some((h) => h.event === 'PreToolUse' || h.event === 'PermissionRequest') ?? false;
            },
            log: (level: 'info' | 'warn' | 'error', message: string) => task.log(level, `task ${task.id}: ${message}`),
          },
        }
      : {}),
    ...(rt.hooks ? { hooks: remoteHooks(task, rt.hooks) } : {}),
  };
}

/**
 * What a task does for the hooks its worker ran: as for its own (TaskHookPoints' identity).
 * An event is announced only when it names this task's session: a worker never speaks for another task.
 */
function remoteHooks(task: RemoteTaskSide, runner: HookRunner): RemoteHookSink {
  return {
    announce: (input) => {
      if (input.session_id === task.rootId) runner.announce(input);
      else task.log('warn', `task ${task.id}: its worker announced a hook event of another session (${input.session_id}); ignored`);
    },
    log: (level, message) => task.log(level, message),
    requestStop: (reason) => task.hookStop(reason),
  };
}

/** What a worker needs besides the turn to run a task's query (see workers/protocol.ts). */
function queryParts(task: RemoteTaskSide, rt: TaskRuntimeOptions): Omit<QueryParams, 'queryId' | 'taskId' | 'turn'> {
  const s = rt.sandbox ?? { enabled: false };
  return {
    runtime: {
      workspace: rt.workspace,
      ...(rt.ripgrepPath ? { ripgrepPath: rt.ripgrepPath } : {}),
      settingsFiles: rt.settingsFiles ?? [],
      sandbox: {
        enabled: s.enabled,
        ...(s.excludedCommands ? { excludedCommands: s.excludedCommands } : {}),
        ...(s.network ? { network: s.network } : {}),
        ...(s.writablePaths ? { writablePaths: s.writablePaths } : {}),
        ...(s.bwrapPath ? { bwrapPath: s.bwrapPath } : {}),
      },
      passEnv: [...(rt.passEnv ?? [])],
      heldSecrets: task.secrets.values(),
      // What the person approved of this workspace, as the host knows it now (the worker reads no approval store).
      trust: { approved: rt.trust?.snapshot() ?? {}, protectedFiles: [...(rt.trust?.protectedFilesNow() ?? new Map<string, string>())] },
      env: { ...task.secrets.extraEnvironment() },
    },
    provider: task.providerConfig(),
    parentModes: task.parentModes(),
    ...(task.loopProgressFile ? { loopProgressFile: task.loopProgressFile } : {}),
    ...(task.checkpoints ? { checkpoints: task.checkpoints } : {}),
    // A command's allowed-tools narrow the worker's decisions as they narrow the host's.
    ...(task.narrowing() ? { narrowing: task.narrowing()! } : {}),
    // The skills the host found and approved: the worker's Skill tool loads only these.
    skills: task.skills(),
    // The hooks that may run now, as the host decided (user hooks, approved workspace hooks):
    // the worker runs these and reads no settings file of its own.
    ...(rt.hooks ? { hooks: { sessionId: task.rootId, transcriptPath: task.transcriptPath, approved: rt.hooks.runnable() } } : {}),
  };
}
