import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateMachine, type AnyStateMachine } from 'xstate';
import { describeAll, describeMachine, executionPaths, MACHINES, ON_WORKERS, transitionKey } from '../../../src/core/machines/catalog';
import { poolMachine } from '../../../src/core/machines/pool/pool.machine';
import { queryMachine } from '../../../src/core/machines/query/query.machine';
import { LockManager } from '../../../src/core/locks/lockManager';
import { denyingAsker } from '../../../src/core/permissions/gate';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { wireTaskMachine, type TaskServices } from '../../../src/core/runtime/wiring';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { WorkerPool } from '../../../src/core/workers/pool';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/** Every transition xstate itself holds for a machine, action-only ones included. */
function xstateTransitionCount(machine: AnyStateMachine): number {
  let n = 0;
  const visit = (node: AnyStateMachine['root']): void => {
    for (const list of node.transitions.values()) for (const t of list) n += Math.max(1, t.target?.length ?? 0);
    for (const t of node.always ?? []) n += Math.max(1, t.target?.length ?? 0);
    for (const child of Object.values(node.states)) visit(child as AnyStateMachine['root']);
  };
  visit(machine.root);
  return n;
}

describe('the catalog prints every transition', () => {
  it.each(MACHINES.map((m) => [m.id, m] as const))('%s: as many as xstate holds, each named once', (_id, machine) => {
    const d = describeMachine(machine);
    expect(d.transitions).toHaveLength(xstateTransitionCount(machine));
    const keys = d.transitions.map(transitionKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a transition that only runs actions is listed with its guard and actions, the state staying', () => {
    const query = describeMachine(queryMachine);
    expect(query.transitions).toContainEqual({ from: '(root)', to: null, event: 'CANCEL', actions: ['assign', 'sendTo'] });
    const pool = describeMachine(poolMachine);
    // The pool's decisions that change no state (a query queued, a worker evicted) show too.
    expect(pool.transitions.filter((t) => t.to === null && t.actions.length > 0).length).toBeGreaterThan(0);
  });
});

describe('how the machines nest while a task runs', () => {
  const services = (remote: boolean): TaskServices => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-nesting-'));
    return {
      taskId: 't',
      workspace,
      locks: new LockManager(),
      tools: createToolRegistry(),
      permissions: lazyEngine({ workspace, trust: NOTHING_APPROVED }),
      asker: denyingAsker,
      createProvider: async () => ({ code: 'no_api_key', message: 'none', retryable: false }),
      publish: () => undefined,
      startSubtask: () => {
        throw new Error('no subtasks here');
      },
      // Never asked for a worker: the machine is only built.
      ...(remote
        ? {
            remote: {
              pool: {} as WorkerPool,
              queryParts: () => {
                throw new Error('no query is sent here');
              },
            },
          }
        : {}),
    };
  };
  const actorsOf = (s: TaskServices) => wireTaskMachine(s).implementations.actors;

  it("on workers the task's turn loop is the machine the catalog names; in the host, the turn machine", () => {
    const onWorkers = actorsOf(services(true)).workerTurn;
    expect(onWorkers).toBeInstanceOf(StateMachine);
    const task = describeAll().machines.find((m) => m.id === ON_WORKERS.runner.machine)!;
    const invoked = (state: string) => task.invokes.find((i) => i.state === state);
    // The catalog's invoke of the worker path is the machine the wiring runs there.
    expect((onWorkers as AnyStateMachine).id).toBe(invoked(ON_WORKERS.runner.onWorkers)?.machine);
    expect(invoked(ON_WORKERS.runner.onWorkers)?.machine).toBe('query');
    expect((actorsOf(services(false)).turnLoop as AnyStateMachine).id).toBe('turn');
    expect(invoked(ON_WORKERS.runner.inHost)?.machine).toBe('turn');
  });

  it('the default path goes task → runPhases, task → query → worker → turn, and every step names states the catalog has', () => {
    const { machines, paths } = describeAll();
    const [workers, host] = paths;
    // A run's phases are the task machine's child on both paths, spawned as the run starts (issue 25 item 2).
    for (const p of [workers!, host!]) expect(p.steps[0]).toEqual({ from: 'task.initializing', to: 'runPhases', how: 'spawned as the state is entered; it outlives the state' });
    expect(workers!.steps.map((s) => `${s.from} → ${s.to}`).slice(1, 4)).toEqual(['task.running.loop.onWorker → query', 'query.processing → worker.busy', 'worker.busy → turn']);
    expect(host!.steps.map((s) => `${s.from} → ${s.to}`)[1]).toBe('task.running.loop.inProcess → turn');
    // Past the worker, both paths nest the same: the turn's model call and permission check.
    expect(workers!.steps.slice(4)).toEqual(host!.steps.slice(2));
    const states = new Set(machines.flatMap((m) => [m.id, ...m.states.map((s) => `${m.id}.${s}`)]));
    for (const s of paths.flatMap((p) => p.steps)) {
      expect(states.has(s.from), s.from).toBe(true);
      expect(states.has(s.to), s.to).toBe(true);
    }
    expect(executionPaths(machines)).toEqual(paths);
  });
});
