import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, fromPromise, type Actor } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../../src/shared/domain/transcript';
import { LockManager } from '../../../src/core/locks/lockManager';
import type { PendingSubtask, TaskMachineEvent } from '../../../src/core/machines/task/task.machine';
import type { TurnLimits } from '../../../src/core/machines/turn/turn.machine';
import type { PermissionAsker } from '../../../src/core/permissions/gate';
import { loadProvider } from '../../../src/core/providers/load';
import { Changes } from '../../unit/helpers/changes';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { wireTaskMachine, type PermissionDecider, type SubtaskHandle } from '../../../src/core/runtime/wiring';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { WorkerPool } from '../../../src/core/workers/pool';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * A small host over the wired task machine, for the races a host can cause: every task has an
 * event log (what a store keeps), views that attach and detach (navigation), and a parent can be
 * rebuilt: its actor stopped and a new one started from its logged conversation
 * (interrupted → RESUME → reconstructing), while its subtask goes on. Subtasks are keyed by
 * (parent, tool call), so a rebuilt parent finds the same child, as TaskRuntime.ensureSubtask does.
 * Providers are the real Anthropic provider (official SDK) against the fake model server; tool
 * calls are decided by the real permission engine. With `pool`, every turn loop runs on a real
 * worker process (the worker bundle), as the runtime runs it by default.
 */
export const LIMITS: TurnLimits = { maxTurns: 20, maxTokens: 1024, contextLimit: 1e9, retryLimit: 2, retryBaseMs: 1, lockTimeoutMs: 0 };


export class MiniHost {
  readonly workspace = mkdtempSync(join(tmpdir(), 'keel-race-'));
  readonly locks = new LockManager();
  readonly logs = new Map<string, TaskEvent[]>();
  readonly actors = new Map<string, Actor<ReturnType<typeof wireTaskMachine>>>();
  private readonly views = new Map<string, Set<(e: TaskEvent) => void>>();
  private readonly children = new Map<string, SubtaskHandle>();
  private readonly tools = createToolRegistry();
  private readonly permissions: PermissionDecider = lazyEngine({ workspace: this.workspace, trust: NOTHING_APPROVED });
  /** Notified at every event a task publishes and every state a task's actor takes (tests wait on it). */
  readonly changes = new Changes();
  /** Called when a child task publishes its `done` (before its parent hears of it). */
  onChildDone: ((childId: string) => void) | null = null;
  private seq = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly asker: PermissionAsker = { ask: async () => ({ decision: 'deny' }) },
    private readonly mode: PermissionMode = 'default',
    private readonly pool: WorkerPool | null = null,
  ) {}

  log(taskId: string): TaskEvent[] {
    let l = this.logs.get(taskId);
    if (!l) this.logs.set(taskId, (l = []));
    return l;
  }

  /** What a view shows of the task: its log folded as the runtime folds it. */
  transcript(taskId: string): TaskTranscript {
    return this.log(taskId).reduce(applyTaskEvent, emptyTranscript(taskId, taskId, 'claude-test'));
  }

  /** The conversation a store rebuilds from the log: `message` events, `compacted` replacing. */
  conversation(taskId: string): ConversationMessage[] {
    let out: ConversationMessage[] = [];
    for (const e of this.log(taskId)) {
      if (e.type === 'message') out.push(e.message);
      if (e.type === 'compacted') out = e.messages.slice();
    }
    return out;
  }

  attachView(taskId: string, listener: (e: TaskEvent) => void): () => void {
    let set = this.views.get(taskId);
    if (!set) this.views.set(taskId, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  start(prompt: string, parentId?: string): string {
    const id = `${parentId ? `${parentId}.child` : 'task'}-${++this.seq}`;
    const actor = this.spawn(id, parentId);
    actor.start();
    actor.send({ type: 'START', text: prompt });
    return id;
  }

  send(taskId: string, event: TaskMachineEvent): void {
    this.actors.get(taskId)?.send(event);
  }

  state(taskId: string): string {
    return JSON.stringify(this.actors.get(taskId)?.getSnapshot().value);
  }

  /**
   * The state a task's run ended in once it has settled (`completed`, `awaitingUser`, `aborted`
   * after their `finishing` step; `failed`, `interrupted`), else null: the task machine's own
   * `settled` tag and sub-state say so, not a copied list of state values.
   */
  settledAs(taskId: string): string | null {
    const snap = this.actors.get(taskId)?.getSnapshot();
    if (!snap || !snap.hasTag('settled')) return null;
    const value: unknown = snap.value;
    if (typeof value === 'string') return value;
    const [top, sub] = Object.entries(value as Record<string, unknown>)[0] ?? [];
    return top !== undefined && sub === 'settled' ? top : null;
  }

  /** Stops the task's actor and starts a new one from its logged conversation (interrupted → RESUME). */
  rebuild(taskId: string, note: string): void {
    this.actors.get(taskId)?.stop();
    const actor = this.spawn(taskId, undefined, this.conversation(taskId));
    actor.start();
    actor.send({ type: 'MARK_INTERRUPTED' });
    actor.send({ type: 'RESUME', note });
  }

  stopAll(): void {
    for (const a of this.actors.values()) a.stop();
  }

  private spawn(id: string, parentId: string | undefined, messages?: ConversationMessage[]) {
    const machine = wireTaskMachine({
      taskId: id,
      workspace: this.workspace,
      locks: this.locks,
      tools: this.tools,
      permissions: this.permissions,
      asker: this.asker,
      createProvider: () => loadProvider({ provider: 'anthropic', model: 'claude-test', baseUrl: this.baseUrl, apiKey: 'test-key' }),
      publish: (e) => {
        this.log(id).push(e);
        this.changes.notify();
        for (const v of this.views.get(id) ?? []) v(e);
        if (parentId && e.type === 'done') this.onChildDone?.(id);
      },
      startSubtask: (sub) => this.ensureChild(id, sub),
      ...(this.pool ? { remote: this.remote(this.pool, parentId !== undefined) } : {}),
    }).provide({ actors: { reconstruct: fromPromise<ConversationMessage[], { taskId: string }>(async () => this.conversation(id)) } });
    const actor = createActor(machine, {
      input: { taskId: id, title: id, model: 'claude-test', mode: this.mode, limits: LIMITS, ...(messages ? { messages } : {}), runner: this.pool ? 'worker' : 'local' },
    });
    actor.subscribe({ next: this.changes.notify, error: () => undefined });
    this.actors.set(id, actor);
    return actor;
  }

  /** What a query carries to a worker for a task of this host (a child: bounded by its parent's mode). */
  private remote(pool: WorkerPool, child: boolean) {
    const parentModes: PermissionMode[] = child ? [this.mode] : [];
    return {
      pool,
      overflow: child,
      parentModes: () => parentModes,
      queryParts: () => ({
        runtime: { workspace: this.workspace, settingsFiles: [], sandbox: { enabled: false }, passEnv: [], heldSecrets: [] },
        provider: { provider: 'anthropic' as const, model: 'claude-test', baseUrl: this.baseUrl, apiKey: 'test-key' },
        parentModes,
      }),
    };
  }

  private ensureChild(parentId: string, sub: PendingSubtask): SubtaskHandle {
    const key = `${parentId}:${sub.toolCallId}`;
    let child = this.children.get(key);
    if (!child) {
      const childId = this.start(`${sub.description}\n\n${sub.prompt}`, parentId);
      const settled = new Promise<TaskEvent & { type: 'done' }>((resolve) => {
        this.attachView(childId, (e) => {
          if (e.type === 'done') resolve(e);
        });
      });
      // A parent's actor going away (a rebuild) does not cancel the child: only a cancel of the task would.
      child = { settled: () => settled, transcript: () => this.transcript(childId), cancel: () => undefined };
      this.children.set(key, child);
    }
    return child;
  }
}
