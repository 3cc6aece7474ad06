import { describe, expect, it } from 'vitest';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { TASK_STATUSES } from '../../../src/shared/protocol/chatMessages';
import { bannerIcon, bannerText } from '../../../webview/pages/StoredTaskBanner';
import { matchesQuery } from '../../../webview/pages/HistoryPage';
import { stateLook } from '../../../src/shared/words/task';

type StateNode = { key: string; states: Record<string, StateNode> };

/** Every state of a machine definition, as dotted paths ("running.waitingForSubtask"). */
function statesOf(node: StateNode, prefix = ''): string[] {
  return Object.values(node.states).flatMap((s) => {
    const path = prefix ? `${prefix}.${s.key}` : s.key;
    return [path, ...statesOf(s, path)];
  });
}

const raw = /[a-z][A-Z]|\./;

describe('task states in words', () => {
  it('every state of the task machine and every stored status reads as words, never as its raw name', () => {
    const states = [...new Set([...statesOf(taskMachine.root as unknown as StateNode), ...TASK_STATUSES, 'running elsewhere'])];
    expect(states).toContain('awaitingUser');
    for (const s of states) {
      const look = stateLook(s);
      expect(look.label, s).not.toMatch(raw);
      // Named in the table, not spelled out by the fallback.
      expect(look.icon, s).not.toBe('codicon-circle-outline');
      expect(look.icon, s).toMatch(/^codicon-/);
      expect(look.sentence, s).not.toMatch(raw);
    }
    expect(stateLook('awaitingUser')).toMatchObject({ label: 'Needs you', icon: 'codicon-warning' });
    expect(stateLook('running.waitingForSubtask').label).toBe('Waiting for a subtask');
    expect(stateLook('completed').label).toBe('Done');
    expect(stateLook('aborted').label).toBe('Cancelled');
  });

  it('a state nobody has named yet is spelled out, not shown raw', () => {
    expect(stateLook('somethingNew').label).toBe('Something new');
    expect(stateLook('').label).toBe('Unknown');
  });

  it('the banner of a reopened failed task says it failed, with the error icon, not a pause', () => {
    const failed = { status: 'failed' as const, resumable: true };
    expect(bannerText(failed)).toBe('This task failed. Resume continues it, or send a follow-up.');
    expect(bannerIcon(failed)).toBe('codicon-error');
    expect(bannerText({ status: 'aborted', resumable: true })).toBe('This task was cancelled. Resume continues it, or send a follow-up.');
    expect(bannerText({ status: 'completed', resumable: false })).toBe('This task is done. Send a follow-up to continue it.');
    expect(bannerIcon({ status: 'interrupted', resumable: true })).toBe('codicon-debug-pause');
    expect(bannerIcon({ status: 'running', resumable: true, heldElsewhere: 'VS Code window 1' })).toBe('codicon-lock');
  });

  it('history search finds a row by the words it shows', () => {
    const row = { taskId: 'abcd1234', title: 'Fix it', startedAt: 1, state: 'aborted', status: 'aborted' as const, done: true, inputTokens: 0, outputTokens: 0, costUsd: 0, current: false };
    expect(matchesQuery(row, 'cancelled')).toBe(true);
    expect(matchesQuery(row, 'aborted')).toBe(true);
    expect(matchesQuery(row, 'done')).toBe(false);
  });
});
