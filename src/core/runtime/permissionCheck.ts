import { randomUUID } from 'node:crypto';
import { createActor, fromPromise, toPromise } from 'xstate';
import type { TaskEvent } from '../../shared/domain/events';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import { permissionMachine } from '../machines/permission/permission.machine';
import type { PermissionOutcome } from '../machines/turn/turn.machine';
import { decideByMode, type PermissionAsker, type PermissionRequest } from '../permissions/gate';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { suggestRules } from '../permissions/persist';
import { parseToolInput } from '../tools/execute';
import type { ToolRegistry } from '../tools/registry';
import type { PermissionSubject } from '../tools/types';
import type { PermissionMode } from './types';

/** What the runtime asks of the permission engine (src/core/permissions): one decision per call. */
export interface PermissionDecider {
  /** Never throws. */
  decide(call: PermissionCall, mode: PermissionMode): Promise<EngineDecision>;
}

export interface PermissionCheckServices {
  workspace: string;
  tools: Pick<ToolRegistry, 'get' | 'names'>;
  /** The permission engine. Without one, calls are decided by the mode alone (`decideByMode`). */
  permissions?: PermissionDecider;
  asker: PermissionAsker;
  publish(event: TaskEvent): void;
}

/** The subject each call was decided on (the same ToolUseBlock object reaches the run). */
const approvedSubjects = new WeakMap<ToolUseBlock, PermissionSubject>();

/**
 * The subject `call` was last decided on by `decideToolCall`, if it was: the tool refuses to
 * write when its target now leads elsewhere (Write/Edit through symlinks, writeTarget.ts).
 */
export function approvedSubject(call: ToolUseBlock): PermissionSubject | undefined {
  return approvedSubjects.get(call);
}

/**
 * The one decision path for a tool call, used by a run (wiring.ts) and by `keel permissions
 * check` (through `explainPermission`): the call's input is validated (an invalid call is answered
 * without asking anyone), the tool describes its subject, and the permission machine decides —
 * plan mode's read-only rule (checkMode), then the engine's rules, modes, dontAsk and safety asks
 * (checkRules), then the asker. Stopping (abort of `signal`) stops the machine, which withdraws a
 * pending prompt. Never rejects for a bad call; the outcome carries the tool_result to send back.
 */
export async function decideToolCall(
  services: PermissionCheckServices,
  request: { taskId: string; call: ToolUseBlock; mode: PermissionMode; requestId?: string },
  signal: AbortSignal,
): Promise<PermissionOutcome> {
  const { call, mode } = request;
  const parsed = parseToolInput(services.tools, call.name, call.input);
  if (!parsed.ok) return { decision: 'invalid', result: toolResult(call.id, parsed.result.content, true) };
  const subject = parsed.tool.subject(parsed.input as never, { workspace: services.workspace });
  // The tool checks at run time that it touches what was decided on (Write/Edit through symlinks).
  approvedSubjects.set(call, subject);
  const decider = services.permissions ?? modeOnly(services.workspace);
  const machine = permissionMachine.provide({
    actors: {
      evaluate: fromPromise(({ input }) => decider.decide(input.call, input.mode)),
      askUser: fromPromise(({ input, signal: askSignal }) => {
        let suggestedRules: string[] = [];
        try {
          suggestedRules = suggestRules({ tool: input.tool, subject: input.subject, workspace: services.workspace });
        } catch {
          // A suggestion is a convenience; without one the user can still allow once.
        }
        return services.asker.ask({ ...input, suggestedRules }, askSignal);
      }),
    },
    actions: { publish: (_: unknown, e: TaskEvent | null) => e && services.publish(e) },
  });
  const actor = createActor(machine, {
    input: { taskId: request.taskId, requestId: request.requestId ?? randomUUID(), toolCallId: call.id, tool: call.name, input: parsed.input, subject, readOnly: parsed.tool.readOnly, mode },
  });
  const stop = () => actor.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    actor.start();
    return await toPromise(actor);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** What `keel permissions check` reports: the decision a run would reach, with "ask" where it would ask. */
export interface PermissionExplanation {
  decision: 'allow' | 'ask' | 'deny';
  reason: string;
  rule?: string;
  source?: string;
  risky?: boolean;
}

/**
 * Runs `decideToolCall` exactly as a run does, except that nobody is asked: where the run would
 * ask, this reports `ask` with what the person would have been shown. The engine's own words
 * (reason, rule, source) are reported when it decided; an invalid call is a denial.
 */
export async function explainPermission(
  services: Omit<PermissionCheckServices, 'asker' | 'publish'>,
  request: { tool: string; input: Record<string, unknown>; mode: PermissionMode },
): Promise<PermissionExplanation> {
  let engine: EngineDecision | undefined;
  let asked: PermissionRequest | undefined;
  const decider = services.permissions ?? modeOnly(services.workspace);
  const outcome = await decideToolCall(
    {
      ...services,
      permissions: {
        async decide(call, mode) {
          engine = await decider.decide(call, mode);
          return engine;
        },
      },
      asker: {
        async ask(req) {
          asked = req;
          return { decision: 'deny', feedback: 'explaining only' };
        },
      },
      publish: () => undefined,
    },
    { taskId: 'permissions-check', call: { type: 'tool_use', id: 'check', name: request.tool, input: request.input }, mode: request.mode },
    new AbortController().signal,
  );
  if (outcome.decision === 'invalid') return { decision: 'deny', reason: `invalid call: ${outcome.result.content}` };
  const fromEngine = (d: PermissionExplanation['decision'], e: EngineDecision): PermissionExplanation => ({
    decision: d,
    reason: e.reason,
    ...(e.rule ? { rule: e.rule } : {}),
    ...(e.source ? { source: e.source } : {}),
    ...(e.risky ? { risky: true } : {}),
  });
  if (asked) return engine ? fromEngine('ask', engine) : { decision: 'ask', reason: asked.reason, ...(asked.risky ? { risky: true } : {}) };
  // Decided before the engine was consulted (plan mode's checkMode): the machine's reason.
  if (!engine || engine.decision !== outcome.decision) return { decision: outcome.decision, reason: outcome.reason };
  return fromEngine(outcome.decision, engine);
}

function modeOnly(workspace: string): PermissionDecider {
  return { decide: async (call, mode) => decideByMode(mode, call.subject, call.readOnly, workspace) };
}

function toolResult(id: string, content: string, isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}
