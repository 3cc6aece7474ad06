import type { BusSubscription, EventBus } from './eventBus';
import type { BusDelivery } from './types';

/** What the metrics collector has counted since it was attached. */
export interface BusMetrics {
  events: number;
  byKind: Record<string, number>;
  /** Events a slow subscriber of the collector itself missed (it is queued like any other). */
  missed: number;
  runs: { completed: number; failed: number };
  /** Milliseconds spent per run phase, over every run. */
  phaseMs: Record<string, number>;
  toolEvents: number;
  memoryHits: number;
  gatekeeper: Record<string, number>;
  tokens: number;
}

/**
 * A queued subscriber that counts what goes over the bus: events per kind, runs, time per run
 * phase, tokens, memory hits and gatekeeper decisions. Hosts log its summary when they end.
 */
export class MetricsCollector {
  private readonly m: BusMetrics = { events: 0, byKind: {}, missed: 0, runs: { completed: 0, failed: 0 }, phaseMs: {}, toolEvents: 0, memoryHits: 0, gatekeeper: {}, tokens: 0 };
  private sub: BusSubscription | null = null;

  attach(bus: EventBus): this {
    this.sub = bus.subscribe((d) => this.count(d), { name: 'metrics' });
    return this;
  }

  detach(): void {
    this.sub?.unsubscribe();
  }

  snapshot(): BusMetrics {
    return structuredClone(this.m);
  }

  private count(d: BusDelivery): void {
    const m = this.m;
    if (d.kind === 'Lagged') {
      m.missed += d.missed;
      return;
    }
    m.events++;
    m.byKind[d.kind] = (m.byKind[d.kind] ?? 0) + 1;
    switch (d.kind) {
      case 'SessionCompleted':
        m.runs.completed++;
        return;
      case 'SessionFailed':
        m.runs.failed++;
        return;
      case 'ToolEventReceived':
        m.toolEvents++;
        return;
      case 'MemoryHit':
        m.memoryHits += d.hits.length;
        return;
      case 'GatekeeperDecision':
        m.gatekeeper[d.decision] = (m.gatekeeper[d.decision] ?? 0) + 1;
        return;
      case 'TaskEvent': {
        const e = d.event;
        if (e.type === 'usage') m.tokens += e.inputTokens + e.outputTokens + e.cacheReadTokens + e.cacheWriteTokens;
        if (e.type === 'phase' && e.previous) m.phaseMs[e.previous] = (m.phaseMs[e.previous] ?? 0) + e.ms;
        return;
      }
      default:
        return;
    }
  }
}
