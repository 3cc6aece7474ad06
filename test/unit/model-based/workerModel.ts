import type { AnyMachineSnapshot, InspectionEvent, StateValue } from 'xstate';
import { workerMachine } from '../../../src/core/machines/worker/worker.machine';
import { WorkerHandle, type WorkerTimeouts } from '../../../src/core/workers/workerHandle';
import { WORKER_NICENESS } from '../../../src/core/workers/workerPriority';
import { eventually, fakeWorker, gone, MISSING_WORKER, runOn, waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelEvent, type ModelPath } from './paths';

/**
 * The worker machine's model. Every event of a path is produced by a real cause in a real child
 * process (the fake worker, test/fixtures/fake-worker): READY is the process saying so, EXITED a
 * real exit (a SIGKILL by the test or by the worker itself), DISCONNECTED a real protocol break
 * (a wrong protocol version, a health answer that is not JSON, a malformed line mid-query),
 * SPAWN_FAILED a binary that does not exist, HEALTH_TIMEOUT a worker that never answers, the
 * delays real timers (short ones). ASSIGN, CANCEL_QUERY and SHUTDOWN are what the pool calls.
 * Health checks that are answered (HEALTH_DUE / HEALTH_OK) change no state and are not offered.
 */
const after = (delay: string, state: string): ModelEvent => ({ type: `xstate.after.${delay}.worker.${state}` });

export function workerPaths(): ModelPath[] {
  return transitionPaths(workerMachine, {
    input: { workerId: 'w', readyTimeoutMs: 1, shutdownGraceMs: 1 },
    events: (s: AnyMachineSnapshot) => {
      const v = JSON.stringify(s.value);
      const common: ModelEvent[] = [
        { type: 'EXITED', code: null, signal: 'SIGKILL' },
        { type: 'DISCONNECTED', reason: 'x', broken: true },
        { type: 'SHUTDOWN', graceful: true, reason: 'test', tag: 'graceful' },
        { type: 'SHUTDOWN', graceful: false, reason: 'test', tag: 'kill' },
      ];
      if (v === '"starting"') return [{ type: 'READY', pid: 1 }, { type: 'SPAWN_FAILED', reason: 'x' }, after('readyTimeout', 'starting'), ...common];
      if (v === '"ready"') return [{ type: 'ASSIGN', queryId: 'q' }, { type: 'HEALTH_TIMEOUT', ms: 1 }, ...common];
      if (v === '{"busy":"working"}') return [{ type: 'QUERY_DONE', queryId: 'q' }, { type: 'CANCEL_QUERY', queryId: 'q' }, { type: 'HEALTH_TIMEOUT', ms: 1 }, ...common];
      if (v === '{"busy":"cancelling"}') return [{ type: 'QUERY_DONE', queryId: 'q' }, after('shutdownGrace', 'busy.cancelling'), { type: 'EXITED', code: null, signal: 'SIGKILL' }];
      if (v === '"shuttingDown"') return [{ type: 'EXITED', code: 0, signal: null }, after('shutdownGrace', 'shuttingDown')];
      return [];
    },
  }).filter((p) => p.events.length > 0);
}

const stateName = (v: StateValue) => (typeof v === 'string' ? v : `busy.${String((v as { busy?: string }).busy)}`);

interface Step {
  event: ModelEvent;
  from: string;
}

/** The flags, command and timeouts that make the real worker produce a path's events. */
function setupFor(steps: Step[]) {
  const has = (type: string, from?: string) => steps.some((s) => s.event.type === type && (from === undefined || s.from === from));
  const flags: string[] = [];
  if (has('xstate.after.readyTimeout.worker.starting') || has('SHUTDOWN', 'starting')) flags.push('--never-ready');
  if (has('EXITED', 'starting')) flags.push('--exit-before-ready');
  if (has('DISCONNECTED', 'starting')) flags.push('--protocol', '99');
  if (has('HEALTH_TIMEOUT')) flags.push('--silent-health');
  if (has('DISCONNECTED', 'ready')) flags.push('--bad-health');
  if (has('xstate.after.shutdownGrace.worker.shuttingDown')) flags.push('--ignore-shutdown');
  const fastHealth = has('HEALTH_TIMEOUT') || has('DISCONNECTED', 'ready');
  const timeouts: WorkerTimeouts = {
    readyMs: has('xstate.after.readyTimeout.worker.starting') ? 400 : 20_000,
    shutdownGraceMs: steps.some((s) => s.event.type.startsWith('xstate.after.shutdownGrace')) ? 400 : 15_000,
    healthIntervalMs: fastHealth ? 250 : 600_000,
    healthAnswerMs: fastHealth ? 250 : 600_000,
    busyHealthAnswerMs: fastHealth ? 250 : 600_000,
  };
  return { command: has('SPAWN_FAILED') ? MISSING_WORKER : fakeWorker(...flags), timeouts };
}

/** What the query says, from what must happen to it next. */
function queryTextFor(next: ModelEvent | undefined, afterNext: ModelEvent | undefined): string {
  switch (next?.type) {
    case 'QUERY_DONE':
      return 'hello';
    case 'CANCEL_QUERY':
      return afterNext?.type.startsWith('xstate.after.shutdownGrace') || afterNext?.type === 'EXITED' ? 'deaf' : 'hang';
    case 'EXITED':
      return 'crash';
    case 'DISCONNECTED':
      return 'malformed';
    default:
      return 'hang';
  }
}

export interface WorkerReplay {
  observed: string[];
  expected: string[];
  pidGone: boolean;
  replies: string[];
}

export async function replayWorker(path: ModelPath, recorder: CoverageRecorder): Promise<WorkerReplay> {
  const steps: Step[] = path.events.map((event, i) => ({ event, from: stateName(path.values[i]!) }));
  const { command, timeouts } = setupFor(steps);
  const observed: string[] = [];
  const replies: string[] = [];
  const handle = new WorkerHandle('w1', {
    command,
    timeouts,
    maxLineBytes: 1024 * 1024,
    niceness: WORKER_NICENESS,
    log: () => undefined,
    onEmitted: () => undefined,
    inspect: (e: InspectionEvent) => recorder.inspect(e),
  });
  handle.actor.subscribe((s) => {
    const v = JSON.stringify(s.value);
    if (observed.at(-1) !== v) observed.push(v);
  });
  let pid: number | null = null;
  try {
    handle.start();
    for (let i = 0; i < steps.length; i++) {
      const { event, from } = steps[i]!;
      await waitForSnapshot(handle.actor, (s) => stateName(s.value) === from, 20_000, from);
      pid = handle.pid ?? pid;
      switch (event.type) {
        case 'ASSIGN': {
          const text = queryTextFor(steps[i + 1]?.event, steps[i + 2]?.event);
          const run = runOn(handle, 'q', 't1', text);
          void run.done.then(() => replies.push(...run.replies));
          break;
        }
        case 'CANCEL_QUERY':
          handle.cancelQuery('q');
          break;
        case 'SHUTDOWN':
          handle.shutdown(event.graceful === true, 'test');
          break;
        case 'EXITED':
          // In ready: a kill -9 from outside. In busy the worker kills itself ("crash"); in
          // shuttingDown or cancelling it exits, or is killed, on its own.
          if (from === 'ready' && handle.pid) process.kill(handle.pid, 'SIGKILL');
          if (from === 'busy.cancelling' && handle.pid) process.kill(handle.pid, 'SIGKILL');
          break;
        default:
          // READY, SPAWN_FAILED, DISCONNECTED, HEALTH_TIMEOUT, QUERY_DONE and the delays come from the process and the clocks.
          break;
      }
    }
    const last = stateName(path.values.at(-1)!);
    await waitForSnapshot(handle.actor, (s) => stateName(s.value) === last, 20_000, last);
    const seen = [...observed];
    pid = handle.pid ?? pid;
    // Whatever state the path ends in, stopping the worker leaves no process of it behind.
    handle.shutdown(false, 'test over');
    await waitForSnapshot(handle.actor, (s) => s.status === 'done', 20_000, 'dead');
    let pidGone = true;
    if (pid !== null) pidGone = await eventually(() => gone(pid), 10_000, `pid ${pid} to be gone`).then(() => true, () => false);
    return { observed: seen, expected: dedupe(path.values), pidGone, replies };
  } finally {
    handle.shutdown(false, 'test over');
  }
}
