import type { PermissionRule } from './rules';

/**
 * What the checks of one call found, before precedence turns it into a decision
 * (deny rules, ask rules, safety asks, the mode, allow rules, the user).
 */
export interface Findings {
  deny?: { reason: string; rule?: PermissionRule };
  ask?: { reason: string; rule?: PermissionRule };
  /** Ask in every mode, bypassPermissions included (protected files, unsandboxed runs). */
  hardAsk: string[];
  /** Ask unless bypassPermissions: nothing (no rule, no acceptEdits) can allow these. */
  softAsk: string[];
  /** The call only reads (plan mode allows it). */
  readOnly: boolean;
  /** The call writes only inside the allowed roots (acceptEdits allows it). */
  writesInside: boolean;
  /**
   * `unruledWrites` (Bash): a file is written (a redirection, `time -o F`, `strace -o F`) that
   * no Edit/Write allow rule covers, whichever Bash rule allowed its command: that write asks
   * (acceptEdits allows it inside the workspace).
   */
  allow?: { reason: string; rules: PermissionRule[]; unruledWrites?: boolean };
  risky: string[];
}

export function emptyFindings(): Findings {
  return { hardAsk: [], softAsk: [], readOnly: false, writesInside: false, risky: [] };
}

/** Rules grouped for lookups. */
export interface RuleSet {
  bash: { deny: PermissionRule[]; ask: PermissionRule[]; allow: PermissionRule[] };
  all: PermissionRule[];
}

export function groupRules(rules: PermissionRule[]): RuleSet {
  const bash = rules.filter((r) => r.tool === 'Bash');
  return {
    bash: { deny: bash.filter((r) => r.behavior === 'deny'), ask: bash.filter((r) => r.behavior === 'ask'), allow: bash.filter((r) => r.behavior === 'allow') },
    all: rules,
  };
}
