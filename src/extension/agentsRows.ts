import type { AgentRow } from '../shared/domain/agents';
import { agentStatusWords } from '../shared/words/agents';

/**
 * What the "Agents" tree shows of the status board's rows (pure): one item per task, sub-agent
 * and loop, children under their parent (a sub-agent under its task, an iteration under its loop),
 * with its status in words, elapsed time, tokens and cost, and a codicon per status.
 */
export interface AgentItem {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  icon: string;
  /** A task or sub-agent opens its chat; a loop has none. */
  taskId?: string;
  /** A loop opens its page (`keel.showLoop`). */
  loopName?: string;
  children: AgentItem[];
}

const ICONS: Record<AgentRow['status'], string> = {
  waiting: 'clock',
  working: 'sync~spin',
  attention: 'bell-dot',
  compacting: 'fold',
  done: 'check',
  error: 'error',
};

export function agentItems(rows: readonly AgentRow[], now: number): AgentItem[] {
  const items = new Map<string, AgentItem>();
  for (const r of rows) items.set(r.id, itemOf(r, now));
  const roots: AgentItem[] = [];
  for (const r of rows) {
    const item = items.get(r.id)!;
    const parent = r.parentId ? items.get(r.parentId) : undefined;
    if (parent) parent.children.push(item);
    else roots.push(item);
  }
  return roots;
}

function itemOf(r: AgentRow, now: number): AgentItem {
  const status = agentStatusWords(r);
  const figures = [elapsed(now - r.startedAt), `${tokens(r.tokens)} tok`, `$${r.costUsd.toFixed(2)}`];
  return {
    id: r.id,
    // Under its loop, an iteration is named by its number: the loop's name is on the row above
    // (a long name cut short in a narrow sidebar made every iteration look the same).
    label: r.kind === 'loop' ? `Loop ${r.title}` : r.iteration !== undefined ? `Iteration ${r.iteration}` : r.title,
    description: [status, ...figures].join(' · '),
    tooltip: `${r.kind === 'subagent' ? 'Sub-agent' : r.kind === 'loop' ? 'Loop' : 'Task'}: ${r.title}\n${status}, ${figures.join(', ')}`,
    icon: ICONS[r.status],
    ...(r.kind === 'loop' ? { loopName: r.id.startsWith('loop:') ? r.id.slice('loop:'.length) : r.title } : { taskId: r.id }),
    children: [],
  };
}

export function elapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function tokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/**
 * What the tree shows of the rows, as one string (pure): the tree refreshes only when it changes.
 * Every refresh replaces the tree's items and the commands they carry, so refreshing for events
 * that change nothing visible (a tool started while already working) made clicks race it.
 */
export function rowsSignature(rows: readonly AgentRow[]): string {
  return JSON.stringify(rows.map((r) => [r.id, r.kind, r.title, r.iteration ?? '', r.parentId ?? '', r.status, r.attention ?? '', r.note ?? '', r.tokens, r.costUsd, r.startedAt]));
}
