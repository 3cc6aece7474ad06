import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { PermissionMode, TaskHandle } from '../../../src/core/runtime/types';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';

/**
 * A sub-agent must never run with more permission than its parent has now: it takes the parent's
 * current mode (not the one the parent started with), tightens when the parent is tightened while
 * it runs, and a looser mode set on the child itself does not widen it. End to end: the real
 * Anthropic provider against the fake model server, the real permission engine, the real Bash tool.
 */
let server: FakeModelServer;
let workspace: string;
let asked: PermissionRequest[];
let runtime: TaskRuntime;

/** A host that asks a person: it records each question and answers no. */
const recordingAsker: PermissionAsker = {
  async ask(request) {
    asked.push(request);
    return { decision: 'deny', feedback: 'not now' };
  },
};

beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-submode-'));
  asked = [];
  runtime = new TaskRuntime({ workspace, asker: recordingAsker, limits: { retryBaseMs: 1 } });
});
afterEach(async () => {
  runtime.dispose();
  await server.close();
  rmSync(workspace, { recursive: true, force: true });
});

const provider = () => ({ provider: 'anthropic' as const, model: 'claude-sonnet-4-5', baseUrl: server.url, apiKey: 'test-key' });

/** Parent: one Task call; child: one Bash call that leaves a marker, then an answer; parent: an answer. */
function scriptDelegation(marker: string, childDelayMs = 0): void {
  server.enqueue(
    { blocks: [{ type: 'tool_use', id: 'toolu_task', name: 'Task', input: { description: 'mark', prompt: 'run the command' } }] },
    { blocks: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: `touch ${marker}` } }], delayMs: childDelayMs },
    { blocks: [{ type: 'text', text: 'child done' }] },
    { blocks: [{ type: 'text', text: 'parent done' }] },
  );
}

function childOf(parent: TaskHandle): TaskHandle {
  const child = runtime.subtaskFor(parent.id, 'toolu_task');
  if (!child) throw new Error('the parent has no subtask for toolu_task');
  return child;
}

function permissionsOf(events: TaskEvent[]) {
  return events.filter((e): e is Extract<TaskEvent, { type: 'permission' }> => e.type === 'permission' && e.tool === 'Bash');
}

async function runDelegation(startMode: PermissionMode, act: (parent: TaskHandle, event: TaskEvent, childEvents: TaskEvent[]) => void) {
  const parent = runtime.startTask({ prompt: 'delegate', provider: provider(), mode: startMode });
  const childEvents: TaskEvent[] = [];
  parent.subscribe((e) => {
    if (e.type === 'task' && e.state === 'waitingForSubtask') {
      // The child is created right after this event and starts a microtask later: attach in between.
      queueMicrotask(() =>
        childOf(parent).subscribe((ce) => {
          childEvents.push(ce);
          act(parent, ce, childEvents);
        }),
      );
    }
    act(parent, e, childEvents);
  });
  const done = await parent.settled();
  return { parent, done, childEvents };
}

describe('a subtask and its parent\'s permission mode', () => {
  it('a parent switched from bypassPermissions to default before the Task call: the child\'s Bash asks, and nothing runs', async () => {
    scriptDelegation('marker-a');
    let switched = false;
    const { parent, done, childEvents } = await runDelegation('bypassPermissions', (p, e) => {
      if (!switched && e.type === 'assistant_start' && e.taskId === p.id) {
        switched = true;
        p.setMode('default');
      }
    });
    expect(done.status).toBe('completed');
    expect(existsSync(join(workspace, 'marker-a'))).toBe(false);
    expect(asked.map((r) => [r.tool, r.taskId])).toEqual([['Bash', childOf(parent).id]]);
    expect(permissionsOf(childEvents).map((e) => e.decision)).toContain('ask');
  });

  it('a parent tightened while its child runs: the child tightens too', async () => {
    scriptDelegation('marker-b', 20);
    let switched = false;
    const { parent, done, childEvents } = await runDelegation('bypassPermissions', (p, e) => {
      // The child is streaming its Bash call: tighten the parent now.
      if (!switched && e.type === 'assistant_start' && e.taskId !== p.id) {
        switched = true;
        p.setMode('default');
      }
    });
    expect(switched).toBe(true);
    expect(done.status).toBe('completed');
    expect(existsSync(join(workspace, 'marker-b'))).toBe(false);
    expect(asked.map((r) => [r.tool, r.taskId])).toEqual([['Bash', childOf(parent).id]]);
    expect(permissionsOf(childEvents).map((e) => e.decision)).toContain('ask');
  });

  it('a looser mode set on the child itself does not widen it beyond its parent', async () => {
    scriptDelegation('marker-c', 20);
    let loosened = false;
    const { parent, done } = await runDelegation('default', (p, e) => {
      if (!loosened && e.type === 'assistant_start' && e.taskId !== p.id) {
        loosened = true;
        childOf(p).setMode('bypassPermissions');
      }
    });
    expect(loosened).toBe(true);
    expect(done.status).toBe('completed');
    expect(existsSync(join(workspace, 'marker-c'))).toBe(false);
    expect(asked.map((r) => [r.tool, r.taskId])).toEqual([['Bash', childOf(parent).id]]);
  });

  it('the child of a parent in bypassPermissions runs the command (the mode does reach it)', async () => {
    scriptDelegation('marker-d');
    const { done } = await runDelegation('bypassPermissions', () => undefined);
    expect(done.status).toBe('completed');
    expect(existsSync(join(workspace, 'marker-d'))).toBe(true);
    expect(asked).toEqual([]);
  });
});
