import type { AlwaysAllow } from '../../shared/protocol/chatMessages';

/** Checks one rule; returns an error for people, or undefined when it is a valid rule. */
export type RuleCheck = (rule: string) => string | undefined;

/**
 * The rules an "Always allow" answer saves: the ones the user edited (trimmed, blank lines
 * dropped, duplicates removed), else every suggested rule (a compound command needs one per
 * command). Pure. Fails when a rule does not pass `check`, so a typo is reported and never saved.
 */
export function alwaysRules(always: AlwaysAllow | undefined, suggested: readonly string[], check?: RuleCheck): { ok: true; rules: string[] } | { ok: false; error: string } {
  const raw = always ? always.rules : suggested;
  const rules = [...new Set(raw.map((r) => r.trim()).filter((r) => r.length > 0))];
  if (always && rules.length === 0) return { ok: false, error: 'Write the rule to save (for example Bash(npm run test:*)).' };
  for (const r of rules) {
    const problem = check?.(r);
    if (problem) return { ok: false, error: `"${r}" is not a valid rule: ${problem}` };
  }
  return { ok: true, rules };
}

