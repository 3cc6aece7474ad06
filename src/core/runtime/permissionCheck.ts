import { randomUUID } from 'node:crypto';
import { createActor, fromPromise, toPromise } from 'xstate';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { TaskEvent } from '../../shared/domain/events';
import { toolResult, type ToolResultBlock, type ToolUseBlock } from '../../shared/domain/messages';
import { permissionMachine, type PermissionOutcome } from '../machines/permission/permission.machine';
import type { ValidationOutcome } from '../machines/turn/types';
import type { EngineDecision, PermissionCall, SearchExclusions } from '../permissions/engine';
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from '../permissions/gate';
import { whatWouldAllow } from '../permissions/whatWouldAllow';
import { parseToolInput } from '../tools/execute';
import type { ToolRegistry } from '../tools/registry';
import type { McpToolSource } from '../mcp/toolSource';
import { mcpCallSubject } from '../mcp/wiring';

/** What the runtime asks of the permission engine (src/core/permissions): one decision per call. */
export interface PermissionDecider {
  /** Never throws. */
  decide(call: PermissionCall, mode: PermissionMode): Promise<EngineDecision>;
  /**
   * True where decisions are played back in the order a run made them (a replay): it is never
   * asked what another mode would decide, which would take one of the run's own decisions.
   */
  readonly playback?: boolean;
  /**
   * What a recursive search below `root` (the Grep and Glob tools) must skip so that it reads
   * nothing the Read rules keep out (engine.ts `searchExclusions`); null when nothing can be
   * said (then `decide` asked about the search). Every decider forwards it: the tools are given
   * it with each call (ToolContext.searchExclusions). Never rejects.
   */
  searchExclusions(root: string): Promise<SearchExclusions | null>;
}

export interface PermissionCheckServices {
  workspace: string;
  tools: Pick<ToolRegistry, 'get' | 'names'>;
  /** The permission engine (or, for a subtask, the engine bounded by its parent). */
  permissions: PermissionDecider;
  asker: PermissionAsker;
  publish(event: TaskEvent): void;
  /** MCP servers' tools: an `mcp__server__tool` call is described by mcp/wiring.ts, not the registry. */
  mcp?: McpToolSource;
}

// The one decision path for a tool call, in two steps that a run and `keel permissions check`
// share: `validateToolCall` (the turn's `validatingInput`; an invalid call is answered without
// asking anyone), then the permission machine with its real actors (`wirePermissionMachine`; the
// turn's `permissionCheck` invokes it as a child): plan mode's read-only rule (checkMode), the
// engine's rules, modes, dontAsk and safety asks (checkRules), then the asker.

/**
 * Looks the tool up, parses the call's input against its schema (once: the result is what the
 * permission check and the tool run use) and has the tool describe what it will touch. Never
 * throws for a bad call: it is answered with the schema's problems. A tool whose `subject`
 * throws (a tool bug) makes this throw. An `mcp__server__tool` call is described by its server's
 * tool list (subject kind `mcp`, never read-only), which sends an allowed one to the turn's `mcpCall`.
 */
export function validateToolCall(
  services: Pick<PermissionCheckServices, 'workspace' | 'tools' | 'mcp'>,
  call: ToolUseBlock,
  requestId: string = randomUUID(),
): ValidationOutcome {
  const mcp = mcpCallSubject(services.mcp, call);
  if (mcp && !mcp.ok) return { ok: false, result: toolResult(call.id, mcp.message, true), summary: 'unknown MCP tool' };
  if (mcp) return { ok: true, call: { id: call.id, tool: call.name, input: call.input, subject: mcp.subject, readOnly: mcp.readOnly, requestId } };
  const parsed = parseToolInput(services.tools, call.name, call.input);
  if (!parsed.ok) return { ok: false, result: toolResult(call.id, parsed.result.content, true), summary: parsed.result.summary };
  const subject = parsed.tool.subject(parsed.input, { workspace: services.workspace });
  return { ok: true, call: { id: call.id, tool: call.name, input: parsed.input, subject, readOnly: parsed.tool.readOnly, requestId } };
}

/**
 * The permission machine with the services' engine and asker. The asker is given what "Always
 * allow" would save. Stopping the actor (a cancelled turn) aborts a pending prompt, which
 * withdraws it.
 */
export function wirePermissionMachine(services: Omit<PermissionCheckServices, 'tools'>) {
  return permissionMachine.provide({
    actors: {
      evaluate: fromPromise(({ input }) => services.permissions.decide(input.call, input.mode)),
      askUser: fromPromise(async ({ input, signal }) => {
        let suggestedRules: string[] = [];
        try {
          // Loaded on the first prompt: the suggestions use the shell analysis, which a process
          // that never asks (a pool's worker in most queries) need not hold (docs/benchmarks.md, pool).
          const { suggestRules } = await import('../permissions/persist');
          suggestedRules = suggestRules({ tool: input.tool, subject: input.subject, workspace: services.workspace });
        } catch {
          // A suggestion is a convenience; without one the user can still allow once.
        }
        // What would allow it without asking (a mode, allow rules), by the same engine: a host
        // with nobody to ask says so instead of a guess (two or three engine decisions, once per prompt).
        const call = { tool: input.tool, input: input.input, subject: input.subject, readOnly: input.readOnly };
        const decide = services.permissions.decide.bind(services.permissions);
        const allowedBy = input.mode && !services.permissions.playback ? await whatWouldAllow(decide, call, input.mode, suggestedRules) : {};
        // Stopped while loading: nobody waits for this prompt any more, so it is never shown.
        if (signal.aborted) return { decision: 'deny', feedback: 'cancelled' } satisfies PermissionAnswer;
        const { readOnly: _readOnly, ...request } = input;
        return services.asker.ask({ ...request, suggestedRules, allowedBy }, signal);
      }),
    },
    actions: { publish: (_: unknown, e: TaskEvent | null) => e && services.publish(e) },
  });
}

/** A decided call, or the answer to an invalid one. */
export type ToolCallDecision = PermissionOutcome | { decision: 'invalid'; result: ToolResultBlock };

/**
 * Both steps at once, outside a run (`keel permissions check` through `explainPermission`, and
 * tests): exactly what a run's turn does for one call. Stopping (abort of `signal`) stops the
 * machine, which withdraws a pending prompt. Never rejects for a bad call.
 */
export async function decideToolCall(
  services: PermissionCheckServices,
  request: { taskId: string; call: ToolUseBlock; mode: PermissionMode; requestId?: string },
  signal: AbortSignal,
): Promise<ToolCallDecision> {
  const v = validateToolCall(services, request.call, request.requestId);
  if (!v.ok) return { decision: 'invalid', result: v.result };
  const c = v.call;
  const actor = createActor(wirePermissionMachine(services), {
    input: { taskId: request.taskId, requestId: c.requestId, toolCallId: c.id, tool: c.tool, input: c.input, subject: c.subject, readOnly: c.readOnly, mode: request.mode },
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
  const decider = services.permissions;
  const outcome = await decideToolCall(
    {
      ...services,
      permissions: {
        async decide(call, mode) {
          engine = await decider.decide(call, mode);
          return engine;
        },
        searchExclusions: (root) => decider.searchExclusions(root),
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
