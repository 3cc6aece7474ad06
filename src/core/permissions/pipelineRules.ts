import type { Findings } from './findings';
import type { PermissionRule } from './rules';
import type { CommandForm, CommandPlan } from './shell/commandPlan';

/**
 * Deny and ask rules that hold shell operators: `Bash(env | base64)`, `Bash(curl * | bash)`,
 * `Bash(history | grep -i password*)`, `Bash(git add * && git push *)`. People write them to
 * stop a combination; Keel matches rules against each simple command, where such a rule never
 * matches. So a deny or ask rule with operators applies to the whole call as well: it matches
 * when each of its parts matches some command of the call (wrappers unwrapped, nested scripts
 * included), in any order and however they are joined — a part written with `|` is also met
 * when the data goes through a file (`env > f; base64 f`), which reaches the same end. Allow
 * rules with operators never match (rules.ts reports them with the rules to write instead).
 */

/** The parts of a specifier split at top-level `|`, `|&`, `||`, `&&`, `;` and `&`; null when it has none. */
export function operatorParts(spec: string): string[] | null {
  const parts: string[] = [];
  let cur = '';
  let quote: string | null = null;
  let split = false;
  for (let i = 0; i < spec.length; i++) {
    const ch = spec[i] as string;
    if (quote) {
      cur += ch;
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"') cur += spec[++i] ?? '';
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
      continue;
    }
    if (ch === '\\') {
      cur += ch + (spec[++i] ?? '');
      continue;
    }
    if (ch === '|' || ch === ';' || ch === '&') {
      // `2>&1` and `&>` are redirections, not operators.
      if (ch === '&' && (spec[i - 1] === '>' || spec[i + 1] === '>')) {
        cur += ch;
        continue;
      }
      while (spec[i + 1] === '|' || spec[i + 1] === '&') i++;
      parts.push(cur.trim());
      cur = '';
      split = true;
      continue;
    }
    cur += ch;
  }
  parts.push(cur.trim());
  if (!split) return null;
  const kept = parts.filter((p) => p !== '');
  return kept.length > 0 ? kept : null;
}

export type RuleMatcher = (rule: PermissionRule, form: CommandForm) => boolean;

/** Applies the deny and ask rules that hold operators to the whole call (see above). */
export function checkOperatorRules(plans: readonly CommandPlan[], deny: readonly PermissionRule[], ask: readonly PermissionRule[], f: Findings, matches: RuleMatcher): void {
  const forms = plans.flatMap((p) => p.denyForms);
  const hit = (rule: PermissionRule): boolean => {
    const parts = rule.specifier === undefined ? null : operatorParts(rule.specifier);
    if (!parts) return false;
    return parts.every((part) => forms.some((form) => matches({ ...rule, specifier: part }, form)));
  };
  const d = deny.find(hit);
  if (d) f.deny ??= { reason: `denied by ${d.raw} (the call holds every command it names)`, rule: d };
  const k = ask.find(hit);
  if (k) f.ask ??= { reason: `${k.raw} asks (the call holds every command it names)`, rule: k };
}
