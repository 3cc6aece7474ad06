/**
 * One row of the agent status board (the "Agents" view, `keel status --json`): a task, a
 * sub-agent or a loop, with what it is doing now.
 */
export type AgentStatus = 'waiting' | 'working' | 'attention' | 'compacting' | 'done' | 'error';
export type AgentKind = 'task' | 'subagent' | 'loop';

export interface AgentRow {
  id: string;
  kind: AgentKind;
  title: string;
  /** The task a sub-agent works for, or the loop an iteration belongs to. */
  parentId?: string;
  /** For a loop's iteration: its number (1, 2, …). */
  iteration?: number;
  status: AgentStatus;
  /** What the person is needed for, while `attention`. */
  attention?: 'permission' | 'input';
  /**
   * How it ended, in words, where the status alone would mislead: a loop that used every
   * iteration without reaching its goal is `error` with "stopped: iteration limit reached".
   */
  note?: string;
  /** Epoch ms when Keel first saw it. */
  startedAt: number;
  /** Epoch ms of its last status change. */
  since: number;
  /** Tokens and cost so far; a loop's include its iterations'. */
  tokens: number;
  costUsd: number;
  /** The process that runs it (for `keel status` across windows and runs). */
  pid?: number;
}

/** "2 working · 1 needs you" — what the status bar says; '' when nothing is working or waiting for the person. */
export function statusSummary(rows: readonly Pick<AgentRow, 'status'>[]): string {
  const working = rows.filter((r) => r.status === 'working' || r.status === 'compacting').length;
  const attention = rows.filter((r) => r.status === 'attention').length;
  const parts: string[] = [];
  if (working > 0) parts.push(`${working} working`);
  if (attention > 0) parts.push(`${attention} needs you`);
  return parts.join(' · ');
}
