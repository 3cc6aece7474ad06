import type { BusDelivery, BusEvent, BusEventInit } from './types';

export type { BusDelivery, BusEvent, BusEventInit, BusEventKind, BusEventOf, LaggedNotice } from './types';

/** The default length of a queued subscriber's queue. */
export const DEFAULT_QUEUE_CAPACITY = 1000;

export interface QueuedSubscriberOptions {
  /** Names the subscriber in logs and stats ("store writer", "socket 4242", "status bar"). */
  name: string;
  /** How many events may wait for it (default 1000). When full, the oldest is dropped and counted. */
  capacity?: number;
  /** Events it does not want never enter its queue. Must not throw. */
  filter?: (e: BusEvent) => boolean;
}

export interface InlineObserverOptions {
  name: string;
  filter?: (e: BusEvent) => boolean;
}

export interface SubscriberStats {
  name: string;
  delivered: number;
  /** Events dropped because its queue was full (each reported once as `Lagged`). */
  missed: number;
  /** Events waiting now. */
  queued: number;
}

export interface BusSubscription {
  readonly name: string;
  /** Stops delivery; queued events are dropped. Idempotent. */
  unsubscribe(): void;
  stats(): SubscriberStats;
  /** Resolves once its queue is empty and its handler has returned (at once for an inline observer). */
  idle(): Promise<void>;
}

type Handler = (d: BusDelivery) => void | Promise<void>;

/**
 * One typed in-process event bus: every event of a host goes through `publish`. Contract:
 * - `publish` is synchronous, never throws, and costs O(subscribers): it never waits for a
 *   subscriber;
 * - **inline observers** (`observe`) run inside `publish`, in subscription order, and see every
 *   event: for what must never miss one and is fast (the task's log writer, a task's view fold).
 *   One that throws is reported to `onError` and keeps its place;
 * - **queued subscribers** (`subscribe`) each have a bounded queue (1,000 by default) drained on
 *   a later microtask; a handler returning a promise gets the next event after it settles. A
 *   subscriber that falls behind loses the oldest waiting events and is told how many with one
 *   `Lagged` notice before the next event it gets; it never slows the publisher or the others;
 * - every subscriber sees events in publish order (`seq` increases by one per event).
 */
export class EventBus {
  private seq = 0;
  private readonly inline: InlineObserver[] = [];
  private readonly queued: QueuedSubscriber[] = [];
  private closed = false;

  constructor(private readonly options: { onError?: (subscriber: string, err: unknown) => void; now?: () => number } = {}) {}

  /**
   * Numbers, times and delivers one event; returns it as subscribers see it. A closed bus drops it
   * (seq 0). `at`: when it happened, when the publisher knows better than now.
   */
  publish(init: BusEventInit, at?: number): BusEvent {
    const event = { ...init, seq: this.closed ? 0 : ++this.seq, at: at ?? (this.options.now ?? Date.now)() } as BusEvent;
    if (this.closed) return event;
    for (const o of this.inline) {
      if (o.filter && !o.filter(event)) continue;
      o.delivered++;
      try {
        o.handler(event);
      } catch (err) {
        this.report(o.name, err);
      }
    }
    for (const s of this.queued) s.offer(event);
    return event;
  }

  /** An inline observer (see the class contract). Its handler must be fast and must not publish recursively for ever. */
  observe(handler: (e: BusEvent) => void, opts: InlineObserverOptions): BusSubscription {
    const o: InlineObserver = { name: opts.name, handler, delivered: 0, ...(opts.filter ? { filter: opts.filter } : {}) };
    this.inline.push(o);
    return {
      name: o.name,
      unsubscribe: () => {
        const i = this.inline.indexOf(o);
        if (i >= 0) this.inline.splice(i, 1);
      },
      stats: () => ({ name: o.name, delivered: o.delivered, missed: 0, queued: 0 }),
      idle: () => Promise.resolve(),
    };
  }

  /** A queued subscriber (see the class contract). */
  subscribe(handler: Handler, opts: QueuedSubscriberOptions): BusSubscription {
    const s = new QueuedSubscriber(opts, handler, (err) => this.report(opts.name, err), () => {
      const i = this.queued.indexOf(s);
      if (i >= 0) this.queued.splice(i, 1);
    });
    this.queued.push(s);
    return s;
  }

  /** Every subscriber's counters, inline observers first. */
  stats(): SubscriberStats[] {
    return [...this.inline.map((o) => ({ name: o.name, delivered: o.delivered, missed: 0, queued: 0 })), ...this.queued.map((s) => s.stats())];
  }

  /** The seq of the last event published. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Resolves once every queued subscriber has handled what it was given so far. */
  async drained(): Promise<void> {
    await Promise.all(this.queued.map((s) => s.idle()));
  }

  /** Later publishes are dropped; subscribers keep what is queued. Idempotent. */
  close(): void {
    this.closed = true;
  }

  private report(name: string, err: unknown): void {
    try {
      this.options.onError?.(name, err);
    } catch {
      // A failing error reporter must not break publishing.
    }
  }
}

interface InlineObserver {
  name: string;
  handler: (e: BusEvent) => void;
  filter?: (e: BusEvent) => boolean;
  delivered: number;
}

/** A bounded ring of events and the loop that hands them to one handler. */
class QueuedSubscriber implements BusSubscription {
  readonly name: string;
  private readonly capacity: number;
  private readonly ring: (BusEvent | undefined)[];
  private head = 0;
  private size = 0;
  private missedSinceNotice = 0;
  private missedTotal = 0;
  private delivered = 0;
  private running = false;
  private active = true;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly opts: QueuedSubscriberOptions,
    private readonly handler: Handler,
    private readonly onError: (err: unknown) => void,
    private readonly detach: () => void,
  ) {
    this.name = opts.name;
    this.capacity = Math.max(1, Math.floor(opts.capacity ?? DEFAULT_QUEUE_CAPACITY));
    this.ring = new Array<BusEvent | undefined>(this.capacity);
  }

  offer(e: BusEvent): void {
    if (!this.active) return;
    if (this.opts.filter) {
      try {
        if (!this.opts.filter(e)) return;
      } catch (err) {
        this.onError(err);
        return;
      }
    }
    if (this.size === this.capacity) {
      // Full: the oldest waiting event is dropped, and counted for the Lagged notice.
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
      this.missedSinceNotice++;
      this.missedTotal++;
    }
    this.ring[(this.head + this.size) % this.capacity] = e;
    this.size++;
    if (!this.running) {
      this.running = true;
      queueMicrotask(() => void this.drain());
    }
  }

  private take(): BusEvent | undefined {
    if (this.size === 0) return undefined;
    const e = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return e;
  }

  private async drain(): Promise<void> {
    while (this.active && this.size > 0) {
      let next: BusDelivery;
      if (this.missedSinceNotice > 0) {
        next = { kind: 'Lagged', missed: this.missedSinceNotice, nextSeq: this.ring[this.head]!.seq };
        this.missedSinceNotice = 0;
      } else {
        next = this.take()!;
        this.delivered++;
      }
      try {
        const r = this.handler(next);
        if (r && typeof (r as Promise<void>).then === 'function') await r;
      } catch (err) {
        this.onError(err);
      }
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  unsubscribe(): void {
    if (!this.active) return;
    this.active = false;
    this.ring.fill(undefined);
    this.size = 0;
    this.detach();
    if (!this.running) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  stats(): SubscriberStats {
    return { name: this.name, delivered: this.delivered, missed: this.missedTotal, queued: this.size };
  }

  idle(): Promise<void> {
    if (!this.running && this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
