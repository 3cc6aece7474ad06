import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { LockManager } from '../../../src/core/locks/lockManager';
import { denyingAsker } from '../../../src/core/permissions/gate';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';
import { wireTaskMachine } from '../../../src/core/runtime/wiring';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { WorkerPool } from '../../../src/core/workers/pool';
import { ScenarioProvider } from '../helpers/scenarioProvider';
import { eventually, fakeWorker, queryParts, waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { LIMITS, TASK_ID } from './system';

/**
 * The task machine's run on a worker (`running.loop.onWorker`), replayed as the runtime wires it
 * with a pool (`remote`: the query machine, real worker processes — the fake worker, which speaks
 * the real protocol and answers by the prompt's text), one case per way a run ends: the turn
 * completes, fails (the worker refuses the query), or is cancelled by the person.
 */
export const WORKER_RUNS = [
  { end: 'completed', prompt: 'hello', cancel: false },
  { end: 'awaitingUser', prompt: 'refuse', cancel: false },
  { end: 'aborted', prompt: 'hold cancelled', cancel: true },
] as const;

/**
 * The run's states, its events, the pid its phases recorded as the runner's (the task machine's
 * child, seen through the inspector: a final child leaves the task's snapshot) and the pids of the
 * pool's workers.
 */
export async function replayOnWorker(
  run: (typeof WORKER_RUNS)[number],
  recorder: CoverageRecorder,
): Promise<{ states: string[]; events: TaskEvent[]; runnerPid: number | null; workerPids: number[] }> {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-mbt-worker-'));
  const pool = new WorkerPool({ command: fakeWorker(), max: 1, shutdownGraceMs: 2000, healthIntervalMs: 600_000 });
  const events: TaskEvent[] = [];
  let runnerPid: number | null = null;
  const workerPids = new Set<number>();
  const inspect = (e: InspectionEvent) => {
    recorder.inspect(e);
    if (e.type !== '@xstate.snapshot') return;
    const snap = e.snapshot as AnyMachineSnapshot;
    if (snap.machine?.id === 'runPhases' && typeof snap.context.runnerPid === 'number') runnerPid = snap.context.runnerPid;
  };
  try {
    const machine = wireTaskMachine({
      taskId: TASK_ID,
      workspace,
      locks: new LockManager(),
      tools: createToolRegistry(),
      permissions: lazyEngine({ workspace, trust: NOTHING_APPROVED }),
      asker: denyingAsker,
      createProvider: async () => new ScenarioProvider([]),
      publish: (e) => events.push(e),
      startSubtask: () => {
        throw new Error('no subtasks in these runs');
      },
      remote: { pool, queryParts },
    });
    const actor = createActor(machine, { input: { taskId: TASK_ID, title: 't', model: 'test-model', mode: 'default', limits: LIMITS, runner: 'worker' }, inspect });
    const states: string[] = [];
    actor.subscribe((s) => {
      const v = JSON.stringify(s.value);
      if (states.at(-1) !== v) states.push(v);
    });
    actor.start();
    actor.send({ type: 'START', text: run.prompt });
    if (run.cancel) {
      await eventually(() => events.some((e) => e.type === 'text'), 20_000, 'the worker streaming');
      actor.send({ type: 'CANCEL' });
    }
    // Settled: the run's finishing is over (nothing to wait for here), its `done` published.
    await waitForSnapshot(actor, (s) => s.matches({ [run.end]: 'settled' }), 20_000, run.end);
    for (const w of pool.status().workers) if (w.pid !== null) workerPids.add(w.pid);
    actor.stop();
    return { states, events, runnerPid, workerPids: [...workerPids] };
  } finally {
    await pool.shutdown();
  }
}
