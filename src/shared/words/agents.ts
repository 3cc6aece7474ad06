import type { AgentRow } from '../domain/agents';
import type { LoopStatus } from '../domain/loop';

/**
 * The status board's rows and the loops in people's words (the Agents view, `keel status`, the
 * loop page): never the agentStatus or loopMode machine's state names.
 */

const AGENT_WORDS: Readonly<Record<AgentRow['status'], string>> = {
  waiting: 'waiting',
  working: 'working',
  attention: 'needs you',
  compacting: 'compacting the conversation',
  done: 'done',
  error: 'failed',
};

/** "working", "needs you (permission)": what an agent row is doing. */
export function agentStatusWords(r: Pick<AgentRow, 'status' | 'attention'>): string {
  return r.status === 'attention' && r.attention ? `needs you (${r.attention})` : AGENT_WORDS[r.status];
}

/** What the loop page's status badge says of a loop, and who drives it. Pure. */
export function loopStatusWords(l: { status: LoopStatus; driver: 'here' | 'elsewhere' | 'none'; heldBy?: string | undefined }): string {
  if (l.driver === 'elsewhere') return `${l.status === 'stalled' ? 'stalled' : 'running'} in ${l.heldBy ?? 'another process'}`;
  if ((l.status === 'active' || l.status === 'continuing') && l.driver === 'none') return 'interrupted';
  if (l.status === 'active' || l.status === 'continuing') return 'running';
  // complete, stalled, cancelled: words already.
  return l.status;
}
