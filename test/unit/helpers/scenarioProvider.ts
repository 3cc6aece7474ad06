import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';

/**
 * A ModelProvider for scenario replays: each request plays the next scripted step. A step either
 * plays its events and ends, or (`hang`) plays them and then waits until the request is aborted,
 * so a test can act while a request is provably in flight. With no step left, a request hangs.
 * A `held` step waits first (counted as hung) until `release()`, then plays its events: a test acts
 * while the request is in flight, then lets it answer.
 * Records every request, the number in flight, and how many are hung right now.
 */
export type ScenarioStep = { events: ProviderEvent[]; hang?: boolean; held?: boolean };

export class ScenarioProvider implements ModelProvider {
  readonly id = 'scripted' as const;
  readonly label = 'scenario provider';
  readonly requests: ProviderRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  hung = 0;
  /** The held requests' releases, in order. */
  private readonly holds: (() => void)[] = [];
  /** Called whenever a request starts, hangs or ends (tests wait on it, not on the clock). */
  onChange: () => void = () => undefined;

  constructor(private readonly steps: ScenarioStep[] = []) {}

  push(...steps: ScenarioStep[]): void {
    this.steps.push(...steps);
  }

  /** Lets the held requests (`held` steps) play their events. */
  release(): void {
    for (const r of this.holds.splice(0)) r();
  }

  remaining(): number {
    return this.steps.length;
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.onChange();
    try {
      const step = this.steps.shift() ?? { events: [], hang: true };
      if (step.held && !signal.aborted) {
        this.hung++;
        this.onChange();
        try {
          await new Promise<void>((resolve) => {
            this.holds.push(resolve);
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        } finally {
          this.hung--;
        }
      }
      for (const e of step.events) {
        if (signal.aborted) return;
        yield e;
        // Let the consumer run between events, as a network stream would.
        await new Promise((r) => setImmediate(r));
      }
      if (step.hang && !signal.aborted) {
        this.hung++;
        this.onChange();
        try {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        } finally {
          this.hung--;
        }
      }
    } finally {
      this.inFlight--;
      this.onChange();
    }
  }
}
