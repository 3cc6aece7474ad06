import type { PermissionMode } from '../../shared/domain/permissionModes';
import { ApprovedHooksRunner } from '../hooks/execute';
import { createPromptHookModel } from '../hooks/promptModel';
import type { ModelProvider } from '../providers/types';
import type { Usage } from '../../shared/domain/messages';
import { isWorkerHookInput } from '../hooks/schemas';
import { TaskHookPoints } from '../hooks/taskHooks';
import type { SecretKeeper } from '../security/secretKeeper';
import { HOOK_LOG_MAX_CHARS, type QueryParams, type ToHost, type ToWorker } from './protocol';
import type { RpcEndpoint } from './rpc';

/**
 * The hook points of one query's turn in the worker (docs/hooks.md, "Hooks on a worker"): the
 * same `TaskHookPoints` the host would use, over the hooks the host approved and sent with the
 * query (never a settings file read here). Hook commands get the tool processes' environment of
 * this query (`secrets.environment()`: no provider key), run in the workspace, as children of
 * this process. What the host must do goes up: each event (`hookEvent`, for its observers and
 * its report of unapproved hooks), what the person must see (`hookLog`) and a hook's
 * `"continue": false` (`hookStop`: the host stops the task, as it would in process; the turn
 * here is cancelled at once).
 * Undefined when the query carries no hooks (the host has no hook runner).
 */
export function workerHookPoints(
  q: QueryParams,
  deps: {
    host: Pick<RpcEndpoint<ToWorker, ToHost>, 'notify' | 'request'>;
    secrets: SecretKeeper;
    mode(): PermissionMode;
    stopTurn(): void;
    /** The query's provider (loaded once by the worker), or why it could not be. */
    provider(): Promise<ModelProvider | string>;
    /** A prompt hook's call: counted in the query's turn (its usage events carry the task's total). */
    charge(usage: Usage, costUsd: number): void;
  },
): TaskHookPoints | undefined {
  const plan = q.hooks;
  if (!plan) return undefined;
  const { queryId } = q;
  const runner = new ApprovedHooksRunner({
    hooks: plan.approved,
    workspace: q.runtime.workspace,
    environment: () => deps.secrets.environment(),
    // Only the turn's events fire here (the task's own ones stay in the host).
    announce: (input) => {
      if (isWorkerHookInput(input)) deps.host.notify('hookEvent', { queryId, input });
    },
  });
  return new TaskHookPoints(runner, {
    taskId: q.taskId,
    sessionId: plan.sessionId,
    workspace: q.runtime.workspace,
    transcriptPath: plan.transcriptPath,
    mode: deps.mode,
    // The host stops the task; the turn stops here at once, as it would in process (where the
    // cancel reaches the turn before the hook's caller returns): no further request or tool.
    requestStop: (reason) => {
      deps.host.notify('hookStop', { queryId, reason: capped(reason) });
      deps.stopTurn();
    },
    log: (level, message) => deps.host.notify('hookLog', { queryId, level, message: capped(message) }),
    // Prompt hooks ask the query's provider here; the task's budget is the host's (as for the turn's requests).
    promptModel: createPromptHookModel({
      taskId: q.taskId,
      provider: deps.provider,
      taskModel: () => q.turn.model,
      admit: (estimateUsd) => deps.host.request('budget', { queryId, purpose: 'hook', estimateUsd }).then((a) => a.verdict),
      charge: deps.charge,
    }),
  });
}

function capped(text: string): string {
  return text.length <= HOOK_LOG_MAX_CHARS ? text : `${text.slice(0, HOOK_LOG_MAX_CHARS - 40)}… (${text.length - HOOK_LOG_MAX_CHARS + 40} more characters cut)`;
}
