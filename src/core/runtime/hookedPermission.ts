import { randomUUID } from 'node:crypto';
import type { ToolUseBlock } from '../../shared/domain/messages';
import type { TaskHookPoints } from '../hooks/taskHooks';
import type { PermissionOutcome } from '../machines/turn/turn.machine';
import { allowingModeAsk } from './loopPermission';
import { decideToolCall, modeOnly, type PermissionCheckServices, type PermissionDecider } from './permissionCheck';
import type { PermissionMode } from './types';

/**
 * The permission check of a run with hooks (docs/hooks.md). PreToolUse hooks run first, before
 * the rules; then the usual decision path (`decideToolCall`) runs with their verdict folded in,
 * so a hook can make a call stricter but never looser than a rule:
 * - "deny" (or exit 2): the call is refused with the hook's reason, which the model sees; no rule
 *   or mode can undo it.
 * - "ask": what the rules and mode would allow is asked instead (dontAsk: denied); what they deny
 *   stays denied.
 * - "allow": only a question asked because of the mode is skipped. A deny rule still denies, an
 *   ask rule or a safety question still asks, plan mode still refuses writes.
 * When the person would be asked, PermissionRequest hooks may answer first (TaskHookPoints.asking).
 * Never rejects for a bad call.
 */
export async function decideWithHooks(
  services: PermissionCheckServices,
  hooks: TaskHookPoints,
  request: { taskId: string; call: ToolUseBlock; mode: PermissionMode },
  signal: AbortSignal,
): Promise<PermissionOutcome> {
  const { call } = request;
  const pre = await hooks.preToolUse(call, signal);
  const verdict = pre.permission;
  if (verdict?.decision === 'deny' || pre.block) {
    const reason = verdict?.decision === 'deny' ? verdict.reason : pre.block!.reason;
    const notes = hooks.takeCallContext(call.id);
    const content = [`A PreToolUse hook blocked this call: ${reason}`, ...notes.map((n) => `[hook] ${n}`)].join('\n\n');
    return { decision: 'deny', reason: `PreToolUse hook: ${reason}`, requestId: randomUUID(), result: { type: 'tool_result', tool_use_id: call.id, content, is_error: true } };
  }
  const inner = services.permissions ?? modeOnly(services.workspace);
  let permissions: PermissionDecider = inner;
  if (verdict?.decision === 'allow') {
    permissions = { decide: (c, mode) => allowingModeAsk(inner, c, mode, `allowed by a PreToolUse hook: ${verdict.reason}`) };
  } else if (verdict?.decision === 'ask') {
    permissions = {
      async decide(c, mode) {
        const d = await inner.decide(c, mode);
        if (d.decision !== 'allow') return d;
        const reason = `a PreToolUse hook asks for confirmation: ${verdict.reason}`;
        return mode === 'dontAsk' ? { decision: 'deny', reason: `${reason} (dontAsk mode denies what would ask)` } : { decision: 'ask', reason };
      },
    };
  }
  const outcome = await decideToolCall({ ...services, permissions, asker: hooks.asking(services.asker) }, request, signal);
  if (outcome.decision === 'allow') return outcome;
  // Refused or invalid: the call's PreToolUse context goes with the refusal.
  const notes = hooks.takeCallContext(call.id);
  if (notes.length === 0) return outcome;
  return { ...outcome, result: { ...outcome.result, content: [outcome.result.content, ...notes.map((n) => `[hook] ${n}`)].join('\n\n') } };
}
