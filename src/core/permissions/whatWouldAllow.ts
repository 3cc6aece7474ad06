import type { PermissionMode } from '../../shared/domain/permissionModes';
import { asksForWantOfARule, type EngineDecision, type PermissionCall } from './engine';
import type { PermissionRequest } from './gate';

/** The modes that may allow more than another, least permissive first (plan and dontAsk never do). */
const LOOSER_MODES: readonly PermissionMode[] = ['acceptEdits', 'bypassPermissions'];

/**
 * What would let a call that asks in `mode` run without asking, decided by the same engine (no
 * hook runs: `decide` is the engine alone): the least permissive mode that allows it, and the
 * suggested allow rules (`suggestedRules`, what "Always allow" would save) when only the lack of a
 * rule made it ask (`asked`: the engine's decision in `mode`). When the engine itself allows the
 * call in `mode` (a hook asked), neither a mode nor a rule would do: nothing is returned. Never
 * rejects (the engine never does).
 */
export async function whatWouldAllow(
  decide: (call: PermissionCall, mode: PermissionMode) => Promise<EngineDecision>,
  call: PermissionCall,
  mode: PermissionMode,
  suggestedRules: readonly string[],
): Promise<NonNullable<PermissionRequest['allowedBy']>> {
  const now = await decide(call, mode);
  if (now.decision !== 'ask') return {};
  let allowing: PermissionMode | undefined;
  for (const m of LOOSER_MODES.slice(LOOSER_MODES.indexOf(mode) + 1)) {
    if ((await decide(call, m)).decision === 'allow') {
      allowing = m;
      break;
    }
  }
  const rules = asksForWantOfARule(call.subject.kind, now) ? suggestedRules.slice(0, 3) : [];
  return { ...(allowing ? { mode: allowing } : {}), ...(rules.length > 0 ? { rules } : {}) };
}
