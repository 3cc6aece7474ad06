import type { TaskEvent } from '../../shared/domain/events';
import type { EventBus } from './eventBus';
import type { BusEventInit } from './types';

/** Where a task event comes from: its parent task, the task's title then, its number in the task. */
export interface TaskOrigin {
  parentId?: string;
  title?: string;
  taskSeq?: number;
}

/**
 * The bus events one task event stands for: itself (`TaskEvent`), then the seed's typed kinds
 * it implies — a machine state (`SessionStateChanged`), a tool call's progress
 * (`ToolEventReceived`), the end of a run (`SessionCompleted` / `SessionFailed`), a run phase,
 * the memories a run used and the gatekeeper's decision. Pure.
 */
export function busEventsOf(event: TaskEvent, origin: TaskOrigin = {}): BusEventInit[] {
  const taskId = event.taskId;
  const out: BusEventInit[] = [{ kind: 'TaskEvent', taskId, event, ...origin }];
  switch (event.type) {
    case 'task':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'task', state: event.state });
      if (event.state === 'interrupted') out.push({ kind: 'SessionFailed', taskId, status: 'interrupted' });
      break;
    case 'turn':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'turn', state: event.state });
      break;
    case 'phase':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'runPhases', state: event.phase, run: event.run });
      break;
    case 'tool_call':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.id, tool: event.name, stage: 'call' });
      break;
    case 'permission':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.toolCallId, tool: event.tool, stage: 'permission', decision: event.decision });
      break;
    case 'tool_result':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.id, tool: '', stage: 'result', isError: event.is_error, summary: event.summary });
      break;
    case 'memory':
      out.push({ kind: 'MemoryHit', taskId, run: event.run, hits: event.hits.map((h) => ({ file: h.file, title: h.title, score: h.score })) });
      break;
    case 'gatekeeper':
      out.push({ kind: 'GatekeeperDecision', taskId, run: event.run, decision: event.decision, rule: event.rule, reasons: event.reasons, ...(event.file ? { file: event.file } : {}) });
      break;
    case 'done':
      if (event.status === 'completed') out.push({ kind: 'SessionCompleted', taskId, stopReason: event.stopReason });
      else if (event.status !== 'running') out.push({ kind: 'SessionFailed', taskId, status: event.status });
      break;
    default:
      break;
  }
  return out;
}

/** Publishes a task event and what it implies, in that order (see `busEventsOf`). */
export function publishTaskEvent(bus: EventBus, event: TaskEvent, origin: TaskOrigin = {}): void {
  for (const e of busEventsOf(event, origin)) bus.publish(e);
}
