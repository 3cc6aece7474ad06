import { createActor, fromPromise, type Actor, type InspectionEvent } from 'xstate';
import type { TaskEvent } from '../../../shared/domain/events';
import type { TaskHandle } from '../../runtime/types';
import { appSessionMachine } from './appSession.machine';

/**
 * What a host (the extension, `keel run`) does at each step of its lifetime. Imported at
 * extension activation, so this file and the machine import nothing heavy (types only from the
 * runtime).
 */
export interface AppLifetimeHooks {
  /** Reads the host's settings and returns the provider to use; rejects only when the host cannot run at all. */
  loadSettings(): Promise<{ provider: string }>;
  /** Resolves when `provider` can be used now (a key is present or not needed); rejects with what is missing. */
  checkAuth(provider: string): Promise<void>;
  /**
   * Records what must survive the process: tasks that had not settled are recorded as interrupted,
   * logs closed, locks released. Called once, when the host is told to end.
   */
  save(): void | Promise<void>;
}

export interface AppLifetimeOptions {
  /** The provider before the settings are read. */
  provider: string;
  /** Each change of state, as a dotted path (logs). */
  onState?(state: string): void;
  /** Watches the appSession actor (tests, coverage). */
  inspect?(event: InspectionEvent): void;
}

/**
 * One host process's lifetime, driven by the appSession machine: the host's hooks are its actors,
 * and the tasks it watches tell it when queries and compactions start and end. Contract:
 * - `exit()` may be called any number of times, from any state (a signal, deactivation, the end
 *   of a run): `save` runs once and the returned promise resolves when the session reached
 *   `exit` — also when saving failed. `save` starts synchronously inside the first `exit()` call,
 *   so a host that must stop at once (SIGTERM) has its tasks recorded before `exit()` returns.
 * - A task is counted as one query per run, from its first running state to its `done` event (or
 *   to being stopped as interrupted); `watch` is idempotent per task.
 */
export class AppLifetime {
  private readonly actor: Actor<typeof appSessionMachine>;
  private readonly watched = new Map<string, () => void>();
  private compactions = 0;
  private readonly ended: Promise<void>;
  private lastState = '';
  private readonly stateWaiters = new Set<() => void>();

  constructor(hooks: AppLifetimeHooks, options: AppLifetimeOptions) {
    const machine = appSessionMachine.provide({
      actors: {
        loadSettings: fromPromise<{ provider?: string }, void>(() => hooks.loadSettings()),
        checkAuth: fromPromise(({ input }: { input: { provider: string } }) => hooks.checkAuth(input.provider)),
        save: fromPromise(async () => {
          await hooks.save();
        }),
      },
    });
    this.actor = createActor(machine, { input: { provider: options.provider }, ...(options.inspect ? { inspect: options.inspect } : {}) });
    this.ended = new Promise((resolve) => {
      this.actor.subscribe({
        next: (s) => {
          const state = s.status === 'done' ? 'exit' : dotted(s.value);
          if (state !== this.lastState) {
            this.lastState = state;
            options.onState?.(state);
            for (const w of [...this.stateWaiters]) w();
          }
          if (s.status === 'done') resolve();
        },
        error: () => resolve(),
      });
    });
  }

  /** Starts the lifetime (init: the settings are read). */
  start(): void {
    this.actor.start();
  }

  /** The current state as a dotted path (e.g. "active.querying"), or "exit". */
  get state(): string {
    const s = this.actor.getSnapshot();
    return s.status === 'done' ? 'exit' : dotted(s.value);
  }

  /** Why the session ended at init, if it did (the settings could not be loaded). */
  get startupProblem(): string | null {
    return this.actor.getSnapshot().context.startupProblem;
  }

  /** Why the provider cannot be used now, if the last check said so. */
  get authProblem(): string | null {
    return this.actor.getSnapshot().context.authProblem;
  }

  /** Resolves when the session has reached `exit`, by whichever path. */
  get exited(): Promise<void> {
    return this.ended;
  }

  /**
   * Resolves with the state once the settings are read and the key checked (auth.missing,
   * active.*), or the session ended: what a host waits for before its first query.
   */
  ready(): Promise<string> {
    const done = () => this.state !== 'init' && this.state !== 'auth.checking';
    if (done()) return Promise.resolve(this.state);
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        this.stateWaiters.delete(check);
        resolve(this.state);
      };
      this.stateWaiters.add(check);
    });
  }

  /** A key was stored: check again. */
  keySet(): void {
    this.send({ type: 'SET_KEY' });
  }

  /** The provider setting changed. */
  providerChanged(provider: string): void {
    this.send({ type: 'PROVIDER_CHANGED', provider });
  }

  /** Counts `task`'s runs as queries (and its compactions) from now on. Returns the function that stops watching. */
  watch(task: TaskHandle): () => void {
    const existing = this.watched.get(task.id);
    if (existing) return existing;
    let running = false;
    let compacting = false;
    const settle = () => {
      if (compacting) this.compacted(false);
      compacting = false;
      if (running) this.send({ type: 'QUERY_SETTLED' });
      running = false;
    };
    const unsubscribe = task.subscribe((e: TaskEvent) => {
      // What a state means comes with its event (a live task's events carry their states' tags,
      // and this file must not load the machines at activation): a running state starts a query
      // (a prompt, a follow-up, Retry, Resume); a settled one ends it, also when no `done` came
      // (stopped by the host, given up).
      if (e.type === 'task' && e.tags?.includes('running') && !running) {
        running = true;
        this.send({ type: 'QUERY_STARTED' });
      } else if (e.type === 'done' || (e.type === 'task' && e.tags?.includes('settled'))) {
        settle();
      } else if (e.type === 'turn' && running && (e.tags?.includes('compacting') ?? false) !== compacting) {
        compacting = !compacting;
        this.compacted(compacting);
      }
    });
    const unwatch = () => {
      if (this.watched.get(task.id) !== unwatch) return;
      this.watched.delete(task.id);
      unsubscribe();
      settle();
    };
    this.watched.set(task.id, unwatch);
    return unwatch;
  }

  /** Ends the lifetime: saves (once) and resolves when the session reached `exit`. */
  exit(): Promise<void> {
    this.send({ type: 'EXIT' });
    return this.ended;
  }

  private compacted(started: boolean): void {
    this.compactions += started ? 1 : -1;
    if (started && this.compactions === 1) this.send({ type: 'COMPACTION_STARTED' });
    if (!started && this.compactions === 0) this.send({ type: 'COMPACTION_DONE' });
  }

  private send(event: Parameters<Actor<typeof appSessionMachine>['send']>[0]): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }
}

function dotted(value: unknown): string {
  if (typeof value === 'string') return value;
  const [k, sub] = Object.entries(value as Record<string, unknown>)[0] ?? ['', ''];
  const rest = dotted(sub);
  return rest ? `${k}.${rest}` : k;
}
