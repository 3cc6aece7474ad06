import { homedir } from 'node:os';
import { saveRule } from '../permissions/persist';
import { allowRuleItem } from './items';
import type { WorkspaceTrust } from './workspaceTrust';

/**
 * "Always allow": saves the person's rules (permissions/persist.ts) and, for a workspace file,
 * records them as approved first (docs/permissions.md, "Trust"): the person chose them, so the
 * next identical call runs without a question, while a rule the repository brings in the same
 * file still waits for the workspace's approval. Rejects as `saveRule` does, or when the approval
 * cannot be recorded (nothing is saved then).
 */
export async function saveApprovedRules(
  rules: string[],
  where: 'project' | 'local' | 'user',
  opts: { workspace: string; home?: string; trust: WorkspaceTrust | null },
): Promise<void> {
  const home = opts.home ?? homedir();
  if (where !== 'user' && opts.trust) {
    const source = where === 'local' ? '.keel/settings.local.json' : '.keel/settings.json';
    await opts.trust.recordOwn(rules.map((r) => allowRuleItem(source, r.trim())));
  }
  await saveRule(rules, where, { workspace: opts.workspace, home });
}
