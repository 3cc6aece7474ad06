import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { AgentKind, AgentRow, AgentStatus } from '../../shared/domain/agents';
import type { ActivitySource } from '../events/activityFeed';
import { agentStatusMachine } from '../machines/agentStatus/agentStatus.machine';
import { statusChanges } from './statusEvents';

/**
 * The agent status board of one process: one agentStatus actor per task, sub-agent and loop it
 * has heard of, moved by the activity feed (statusEvents.ts), never by polling. Listeners are told
 * after each change; `rows()` is the current picture, parents before their children.
 */
interface Entry {
  id: string;
  kind: AgentKind;
  title: string;
  parentId?: string;
  iteration?: number;
  startedAt: number;
  /** When its status (or what it needs) last changed. */
  since: number;
  note?: string;
  actor: Actor<typeof agentStatusMachine>;
}

export class StatusBoard {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribe: () => void;

  private readonly now: () => number;
  private readonly inspect: ((e: InspectionEvent) => void) | undefined;

  /** `now` and `inspect` (xstate's inspection of each row's actor) are for tests. */
  constructor(feed: ActivitySource, opts: { now?: () => number; inspect?: (e: InspectionEvent) => void } = {}) {
    this.now = opts.now ?? Date.now;
    this.inspect = opts.inspect;
    this.unsubscribe = feed.subscribe((a) => {
      const changes = statusChanges(a);
      if (changes.length === 0) return;
      for (const c of changes) {
        const entry = this.entry(c.id, c.kind, c.parentId);
        if (c.title) entry.title = c.title;
        if (c.parentId && !entry.parentId) entry.parentId = c.parentId;
        if (c.iteration !== undefined) entry.iteration = c.iteration;
        if (c.note === null) delete entry.note;
        else if (c.note !== undefined) entry.note = c.note;
        if (c.event) {
          const before = JSON.stringify(entry.actor.getSnapshot().value);
          entry.actor.send(c.event);
          if (JSON.stringify(entry.actor.getSnapshot().value) !== before) entry.since = this.now();
        }
      }
      for (const l of this.listeners) l();
    });
  }

  rows(): AgentRow[] {
    const rows = [...this.entries.values()].map((e) => {
      const s = e.actor.getSnapshot();
      const attention = attentionOf(e.actor);
      return {
        id: e.id,
        kind: e.kind,
        title: e.title,
        ...(e.parentId ? { parentId: e.parentId } : {}),
        ...(e.iteration !== undefined ? { iteration: e.iteration } : {}),
        status: statusOf(e.actor),
        ...(attention ? { attention } : {}),
        ...(e.note ? { note: e.note } : {}),
        startedAt: e.startedAt,
        since: e.since,
        tokens: s.context.tokens,
        costUsd: s.context.costUsd,
      };
    });
    // A loop's figures are its iterations' (the loop's own actor never hears of usage).
    for (const loop of rows.filter((r) => r.kind === 'loop')) {
      for (const child of rows.filter((r) => r.parentId === loop.id)) {
        loop.tokens += child.tokens;
        loop.costUsd += child.costUsd;
      }
    }
    const order = (r: AgentRow): string => (r.parentId ? `${r.parentId}\u0000${r.startedAt}` : `${r.id}`);
    const roots = rows.filter((r) => !r.parentId || !this.entries.has(r.parentId)).sort((a, b) => a.startedAt - b.startedAt);
    const out: AgentRow[] = [];
    const add = (r: AgentRow) => {
      out.push(r);
      for (const c of rows.filter((x) => x.parentId === r.id).sort((a, b) => order(a).localeCompare(order(b)))) add(c);
    };
    for (const r of roots) add(r);
    return out;
  }

  /** The row of `id`, if any. */
  row(id: string): AgentRow | undefined {
    return this.rows().find((r) => r.id === id);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Removes a row and its children (a task deleted, a loop closed). */
  forget(id: string): void {
    for (const e of [...this.entries.values()]) {
      if (e.id === id || e.parentId === id) {
        e.actor.stop();
        this.entries.delete(e.id);
      }
    }
    for (const l of this.listeners) l();
  }

  dispose(): void {
    this.unsubscribe();
    for (const e of this.entries.values()) e.actor.stop();
    this.entries.clear();
    this.listeners.clear();
  }

  private entry(id: string, kind: AgentKind, parentId: string | undefined): Entry {
    let e = this.entries.get(id);
    if (!e) {
      const at = this.now();
      const actor = createActor(agentStatusMachine, this.inspect ? { inspect: this.inspect } : {}).start();
      e = { id, kind, title: kind === 'loop' ? id.replace(/^loop:/, '') : 'Task', startedAt: at, since: at, actor, ...(parentId ? { parentId } : {}) };
      this.entries.set(id, e);
    }
    return e;
  }
}

function statusOf(actor: Actor<typeof agentStatusMachine>): AgentStatus {
  const v = actor.getSnapshot().value;
  return (typeof v === 'string' ? v : Object.keys(v)[0]) as AgentStatus;
}

function attentionOf(actor: Actor<typeof agentStatusMachine>): 'permission' | 'input' | undefined {
  const v = actor.getSnapshot().value;
  return typeof v === 'object' && 'attention' in v ? (v.attention as 'permission' | 'input') : undefined;
}
