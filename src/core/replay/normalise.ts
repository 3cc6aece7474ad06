import type { TaskEvent } from '../../shared/domain/events';

/** An event as compared: plain JSON data. */
export type Normalised = Record<string, unknown>;

/**
 * Project memory is not played back: which memories a run finds depends on the workspace's
 * `.keel/memory/` as it is now, and the gatekeeper's lesson call is not in the log. Their events
 * (and a memory write's phase, and the lesson call's usage with its share of the later running
 * totals) are left out of the comparison on both sides; the replay runs with memory off.
 */
// `waiting` (and `waiting_ended`) say the live stream was quiet for a while: a replay's recorded answers come at once.
const NOT_REPLAYED = new Set<TaskEvent['type']>(['instructions', 'memory', 'gatekeeper', 'waiting', 'waiting_ended']);

/**
 * Events as compared, built one event at a time (a replay checks its progress after each one):
 * without project memory's (NOT_REPLAYED), without task ids (a replay runs under a new id, which
 * also names its user messages), without the measured duration of a run phase, permission request
 * ids numbered by first appearance (they are random), and consecutive streamed deltas merged as
 * the log merges them.
 */
export class Normaliser {
  readonly out: Normalised[] = [];
  private readonly requests = new Map<string, string>();
  // The lesson call's usage (published while the gatekeeper evaluates) is project memory's too: it
  // is left out, and the running totals after it are compared without what it cost.
  private inGatekeeper = false;
  private lessonCostUsd = 0;

  constructor(
    private readonly recordedId: string,
    private readonly replayId: () => string,
  ) {}

  static of(events: TaskEvent[], recordedId: string, replayId = recordedId): Normalised[] {
    const n = new Normaliser(recordedId, () => replayId);
    for (const e of events) n.push(e);
    return n.out;
  }

  push(e: TaskEvent): void {
    const out = this.out;
    if (e.type === 'phase') this.inGatekeeper = e.phase === 'gatekeeperEvaluating';
    if (e.type === 'usage' && this.inGatekeeper) {
      this.lessonCostUsd += e.costUsd;
      return;
    }
    if (NOT_REPLAYED.has(e.type) || (e.type === 'phase' && (e.phase === 'memoryPersisting' || e.previous === 'memoryPersisting'))) return;
    let text = JSON.stringify(e);
    const replayId = this.replayId();
    if (replayId) text = text.split(replayId).join('<task>');
    if (this.recordedId) text = text.split(this.recordedId).join('<task>');
    const n = JSON.parse(text) as Normalised;
    delete n.taskId;
    // Tags say what a state means and follow from its name, which is compared; logs written
    // before events carried them have none.
    if (e.type === 'task' || e.type === 'turn') delete n.tags;
    // How long a run phase took is measured, not decided by the machines.
    if (e.type === 'phase') delete n.ms;
    // Rounded: a total that had a lesson's cost added, then taken away, differs in its last bits.
    if (e.type === 'usage') n.totalCostUsd = Number((e.totalCostUsd - this.lessonCostUsd).toFixed(9));
    if (e.type === 'permission') {
      if (!this.requests.has(e.requestId)) this.requests.set(e.requestId, `request-${this.requests.size + 1}`);
      n.requestId = this.requests.get(e.requestId);
    }
    const prev = out[out.length - 1];
    if (prev && (e.type === 'text' || e.type === 'thinking') && prev.type === e.type) {
      prev.delta = String(prev.delta) + String(n.delta);
      return;
    }
    if (prev && e.type === 'tool_output' && prev.type === 'tool_output' && prev.id === e.id) {
      prev.chunk = String(prev.chunk) + String(n.chunk);
      return;
    }
    out.push(n);
  }

  /**
   * Whether these events have reached the first `length` of `want`: as many, the last one whole
   * (a merged delta may still grow), or more.
   */
  covers(want: Normalised[], length: number): boolean {
    if (this.out.length !== length) return this.out.length > length;
    return length === 0 || sameEvent(this.out[length - 1], want[length - 1]);
  }
}

export function sameEvent(a: Normalised | undefined, b: Normalised | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}
