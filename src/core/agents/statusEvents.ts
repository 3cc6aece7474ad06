import type { ActivityEvent } from '../events/activityFeed';
import type { AgentStatusEvent } from '../machines/agentStatus/agentStatus.machine';
import type { AgentKind } from '../../shared/domain/agents';
import { taskEventHasTag } from '../machines/task/taskTags';
import { turnEventHasTag } from '../machines/turn/turnTags';

/**
 * How the activity of one process moves the status of its agents: which row an event is about and
 * what it means for it. Pure. Hook events name the task (`session_id`) and, inside a sub-agent,
 * the subtask (`agent_id`); task events name their task; loop events their loop (`loop:<name>`).
 */
export interface StatusChange {
  id: string;
  kind: AgentKind;
  parentId?: string;
  title?: string;
  /** A loop's iteration: its number (its row's name under the loop). */
  iteration?: number;
  event?: AgentStatusEvent;
  /** How it ended, in words (AgentRow.note); null clears it. */
  note?: string | null;
}

export function loopRowId(name: string): string {
  return `loop:${name}`;
}

export function statusChanges(a: ActivityEvent): StatusChange[] {
  switch (a.kind) {
    case 'hook': {
      const i = a.input;
      const sub = i.agent_id !== undefined && i.agent_id !== i.session_id;
      const row = sub ? { id: i.agent_id!, kind: 'subagent' as const, parentId: i.session_id } : { id: i.session_id, kind: 'task' as const };
      switch (i.hook_event_name) {
        case 'SessionStart':
          return [row];
        case 'UserPromptSubmit':
          return [{ ...row, event: { type: 'PROMPT' } }];
        case 'PreToolUse':
        case 'PostToolUse':
          return [{ ...row, event: { type: 'ACTIVITY' } }];
        case 'Notification':
          if (i.notification_type === 'permission_prompt') return [{ ...row, event: { type: 'NEEDS_PERMISSION' } }];
          return i.notification_type === 'agent_needs_input' ? [{ ...row, event: { type: 'NEEDS_INPUT' } }] : [];
        case 'PreCompact':
          return [{ ...row, event: { type: 'COMPACTING' } }];
        case 'Stop':
        case 'SubagentStop':
          return [{ ...row, event: { type: 'STOPPED' } }];
        case 'PermissionRequest':
        case 'SessionEnd':
          return [];
      }
      return [];
    }
    case 'task': {
      const e = a.event;
      const row = { id: e.taskId, kind: a.parentId ? ('subagent' as const) : ('task' as const), ...(a.parentId ? { parentId: a.parentId } : {}) };
      switch (e.type) {
        case 'task':
          if (taskEventHasTag(e, 'running')) return [{ ...row, ...(e.title ? { title: e.title } : {}), event: { type: 'ACTIVITY' } }];
          return e.title ? [{ ...row, title: e.title }] : [];
        case 'permission':
          return [{ ...row, event: e.decision === 'ask' ? { type: 'NEEDS_PERMISSION' } : { type: 'ANSWERED' } }];
        case 'turn':
          return turnEventHasTag(e, 'compacting') ? [{ ...row, event: { type: 'COMPACTING' } }] : turnEventHasTag(e, 'working') ? [{ ...row, event: { type: 'ACTIVITY' } }] : [];
        case 'usage':
          return [{ ...row, event: { type: 'USAGE', tokens: e.inputTokens + e.outputTokens + e.cacheReadTokens + e.cacheWriteTokens, costUsd: e.costUsd } }];
        case 'done':
          return [{ ...row, event: e.status === 'failed' ? { type: 'FAILED' } : { type: 'STOPPED' } }];
        default:
          return [];
      }
    }
    case 'loop': {
      const e = a.event;
      const row = { id: loopRowId(e.name), kind: 'loop' as const };
      switch (e.state) {
        case 'started':
        case 'resumed':
          return [{ ...row, event: { type: 'ACTIVITY' }, note: null }];
        case 'iteration':
          return [{ ...row, event: { type: 'ACTIVITY' } }, { id: e.taskId, kind: 'task', parentId: row.id, title: `${e.name}: iteration ${e.iteration}`, iteration: e.iteration }];
        case 'stalled':
          return [{ ...row, event: { type: 'NEEDS_INPUT' } }];
        case 'complete':
        case 'cancelled':
          return [{ ...row, event: { type: 'STOPPED' }, note: null }];
        // A limit reached is not a goal reached: not done.
        case 'stopped':
          return [{ ...row, event: { type: 'FAILED' }, note: 'stopped: iteration limit reached' }];
        default:
          return [];
      }
    }
  }
}
