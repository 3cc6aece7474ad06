import type { AgentRow } from '../shared/domain/agents';

/**
 * Which agents newly need the person for something no other surface already asks about (pure):
 * the attention notification of the status board (docs/loop.md, "In VS Code").
 *
 * - A waiting **permission** is not here: the permission broker shows its card in the chats that
 *   show its task (in every chat when none does: sub-agents, background tasks) and, while none of
 *   those is visible, a notification with Allow / Deny, withdrawn when answered anywhere. A
 *   second notification for it would be a duplicate.
 * - A **loop** that stalled is not here either: its own notification says why and offers Continue
 *   and Show Loop (windowLoops.ts).
 * - What remains is a task or sub-agent waiting for an answer (`attention.input`, e.g. the
 *   `agent_needs_input` notification): one notice per time it starts waiting (`since`), none while
 *   a visible chat shows that task (or its parent, for a sub-agent). Each chat surface (the
 *   sidebar, the editor tab) shows its own task, so `visibleTaskIds` holds every visible one.
 *
 * `seen` holds the episodes already told (row id → since); it is updated in place, and forgets rows
 * that no longer wait.
 */
export function attentionToTell(rows: readonly AgentRow[], seen: Map<string, number>, visibleTaskIds: ReadonlySet<string>): AgentRow[] {
  const waiting = rows.filter((r) => r.status === 'attention' && r.attention === 'input' && r.kind !== 'loop');
  const ids = new Set(waiting.map((r) => r.id));
  for (const id of [...seen.keys()]) if (!ids.has(id)) seen.delete(id);
  const tell: AgentRow[] = [];
  for (const r of waiting) {
    if (seen.get(r.id) === r.since) continue;
    seen.set(r.id, r.since);
    if (visibleTaskIds.has(r.id) || (r.parentId !== undefined && visibleTaskIds.has(r.parentId))) continue;
    tell.push(r);
  }
  return tell;
}
