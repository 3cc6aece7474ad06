import { callMachine } from '../../../src/core/machines/call/call.machine';
import { textTurn } from '../helpers/scriptedEvents';
import { dedupe, invokeIds, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { emptyScript, TASK_ID, type Script, type Trigger } from './system';

/**
 * The call machine's model: the lock's answer (LOCK_ACQUIRED / LOCK_FAILED) and the stream's
 * completion are its events; whether the continuation is a duplicate is decided on entry, so
 * the model is traversed twice (the guard true, then false). Replayed inside a whole wired task:
 * a duplicate is a continuation already registered in the real LockManager, a lock failure is
 * the task lock held by someone else past the call's lock timeout.
 */
const INPUT = { taskId: TASK_ID, request: { model: 'm', system: [], messages: [], tools: [], maxTokens: 1 }, continuationKey: 'k', lockTimeoutMs: 0 };

export function callPaths(): (ModelPath & { duplicate: boolean })[] {
  const out: (ModelPath & { duplicate: boolean })[] = [];
  for (const duplicate of [true, false]) {
    const machine = callMachine.provide({ guards: { isDuplicateContinuation: () => duplicate } });
    const paths = transitionPaths(machine, {
      input: INPUT,
      events: (s) => {
        const evs: ModelEvent[] = [{ type: 'LOCK_ACQUIRED' }, { type: 'LOCK_FAILED', reason: 'timeout' }];
        for (const id of invokeIds(s)) if (id.endsWith('guarded.running')) evs.push({ type: `xstate.done.actor.${id}`, output: { ok: false, timeout: true } });
        return evs;
      },
    });
    out.push(...paths.map((p) => ({ ...p, duplicate })));
  }
  return out;
}

export function compileCall(path: ModelPath & { duplicate: boolean }): { script: Script; triggers: Trigger[]; expected: string[] } {
  const script = emptyScript();
  script.init = ['ok'];
  const types = path.events.map((e) => e.type);
  const last = JSON.stringify(path.values.at(-1));
  if (path.duplicate) script.duplicateKeys = [`${TASK_ID}:r1:c0:h1:a1`];
  if (types.includes('LOCK_FAILED')) {
    script.holdLock = true;
    script.limits.lockTimeoutMs = 20;
  } else if (last === JSON.stringify({ guarded: 'queued' })) {
    script.holdLock = true;
  }
  if (types.some((t) => t.startsWith('xstate.done.actor'))) script.provider = [{ events: textTurn('done') }];
  return { script, triggers: [], expected: dedupe(path.values) };
}
