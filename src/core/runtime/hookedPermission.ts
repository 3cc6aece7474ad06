import { fromPromise } from 'xstate';
import type { ToolUseBlock } from '../../shared/domain/messages';
import type { TaskHookPoints } from '../hooks/taskHooks';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import type { PermissionAsker } from '../permissions/gate';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { allowingModeAsk } from './loopPermission';
import { wirePermissionMachine, type PermissionCheckServices } from './permissionCheck';

/**
 * The permission machine of a run with hooks (docs/hooks.md): the turn's `permissionCheck` child
 * as `wirePermissionMachine` builds it, with PreToolUse hooks in front of the rules (its
 * `evaluate` step) and PermissionRequest hooks in front of the person (its `askUser` step). A hook
 * can make a call stricter but never looser than a rule:
 * - "deny" (or exit 2): the call is refused with the hook's reason, which the model sees; no rule
 *   or mode can undo it.
 * - "ask": what the rules and mode would allow is asked instead (dontAsk: denied); what they deny
 *   stays denied.
 * - "allow": only a question asked because of the mode is skipped. A deny rule still denies, an
 *   ask rule or a safety question still asks, plan mode still refuses writes (its checkMode runs
 *   before the rules, so PreToolUse never sees a call plan mode refuses).
 * A refused call's PreToolUse context goes with the refusal the model reads.
 */
export function wireHookedPermissionMachine(services: Omit<PermissionCheckServices, 'tools'>, hooks: TaskHookPoints) {
  const asker = withNotesOnDenial(hooks.asking(services.asker), hooks);
  return wirePermissionMachine({ ...services, asker }).provide({
    actors: {
      evaluate: fromPromise<EngineDecision, { call: PermissionCall; mode: PermissionMode; toolCallId: string }>(async ({ input, signal }) => {
        const d = await decideWithHooks(services.permissions.decide.bind(services.permissions), hooks, input, signal);
        if (d.decision !== 'deny') return d;
        const notes = hooks.takeCallContext(input.toolCallId);
        return notes.length === 0 ? d : { ...d, reason: [d.reason, ...notes.map((n) => `[hook] ${n}`)].join('\n\n') };
      }),
    },
  });
}

/**
 * PreToolUse, then the engine with the hook's verdict folded in (see above). Never rejects for a
 * bad call; a hook that fails is the hook runner's to report (it never widens).
 */
async function decideWithHooks(
  decide: (call: PermissionCall, mode: PermissionMode) => Promise<EngineDecision>,
  hooks: TaskHookPoints,
  request: { call: PermissionCall; mode: PermissionMode; toolCallId: string },
  signal: AbortSignal,
): Promise<EngineDecision> {
  const { call, mode } = request;
  const pre = await hooks.preToolUse(toolUseOf({ id: request.toolCallId, tool: call.tool, input: call.input }), signal);
  const verdict = pre.permission;
  if (verdict?.decision === 'deny') return { decision: 'deny', reason: `PreToolUse hook: ${verdict.reason}` };
  if (pre.block) return { decision: 'deny', reason: `PreToolUse hook: ${pre.block.reason}` };
  if (verdict?.decision === 'allow') return allowingModeAsk({ decide }, call, mode, `allowed by a PreToolUse hook: ${verdict.reason}`);
  const d = await decide(call, mode);
  if (verdict?.decision !== 'ask' || d.decision !== 'allow') return d;
  const reason = `a PreToolUse hook asks for confirmation: ${verdict.reason}`;
  return mode === 'dontAsk' ? { decision: 'deny', reason: `${reason} (dontAsk mode denies what would ask)` } : { decision: 'ask', reason };
}

/** The person (or a PermissionRequest hook) refused: the call's PreToolUse context goes with the refusal. */
function withNotesOnDenial(asker: PermissionAsker, hooks: TaskHookPoints): PermissionAsker {
  return {
    async ask(request, signal) {
      const answer = await asker.ask(request, signal);
      if (answer.decision === 'allow') return answer;
      const notes = hooks.takeCallContext(request.toolCallId);
      if (notes.length === 0) return answer;
      return { ...answer, feedback: [answer.feedback ?? '', ...notes.map((n) => `[hook] ${n}`)].filter(Boolean).join('\n\n') };
    },
  };
}

/** The tool call as hooks see it (`tool_name`, `tool_input`, `tool_use_id`), from its parsed input. */
export function toolUseOf(call: { id: string; tool: string; input: unknown }): ToolUseBlock {
  const input = typeof call.input === 'object' && call.input !== null && !Array.isArray(call.input) ? (call.input as Record<string, unknown>) : {};
  return { type: 'tool_use', id: call.id, name: call.tool, input };
}
