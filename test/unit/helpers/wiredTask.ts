import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { LockManager } from '../../../src/core/locks/lockManager';
import type { TurnLimits } from '../../../src/core/machines/turn/turn.machine';
import { denyingAsker } from '../../../src/core/permissions/gate';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { wireTaskMachine, type TaskServices } from '../../../src/core/runtime/wiring';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { ListProvider, type Step } from './scriptedEvents';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * One task machine wired as the runtime wires it (real machines, tools and permission engine in a
 * fresh workspace), with a scripted provider, a denying asker and the given subtask starter; the
 * events it publishes are collected. `settled(n)` resolves once n `done` events were published.
 */
export function wiredTask(steps: Step[], opts: { model?: string; costUsd?: number; limits?: Partial<TurnLimits>; startSubtask?: TaskServices['startSubtask'] } = {}) {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-wired-'));
  const events: TaskEvent[] = [];
  const provider = new ListProvider(steps);
  const machine = wireTaskMachine({
    taskId: 't',
    workspace,
    locks: new LockManager(),
    tools: createToolRegistry(),
    permissions: lazyEngine({ workspace, trust: NOTHING_APPROVED }),
    asker: denyingAsker,
    createProvider: async () => provider,
    publish: (e) => events.push(e),
    startSubtask:
      opts.startSubtask ??
      (() => {
        throw new Error('no subtasks here');
      }),
  });
  const actor = createActor(machine, {
    input: {
      taskId: 't',
      title: 't',
      model: opts.model ?? 'claude-sonnet-4-5',
      mode: 'default',
      limits: { maxTurns: 5, maxTokens: 100, contextLimit: 1e9, retryLimit: 0, retryBaseMs: 1, lockTimeoutMs: 0, ...opts.limits },
      ...(opts.costUsd !== undefined ? { costUsd: opts.costUsd } : {}),
    },
  });
  const settled = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (events.filter((e) => e.type === 'done').length >= n) resolve();
      };
      actor.subscribe(check);
      check();
    });
  return { actor, events, provider, settled, workspace };
}
