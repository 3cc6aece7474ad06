import { describe, expect, it } from 'vitest';
import { StatusBoard } from '../../../src/core/agents/board';
import { ActivityFeed } from '../../../src/core/events/activityFeed';
import type { HookInput } from '../../../src/core/hooks/types';
import { attentionToTell } from '../../../src/extension/attention';

/**
 * The attention notification over the real status board: one notice per time a task or sub-agent
 * starts waiting for an answer, none for permissions (the broker's notification asks those) or
 * stalled loops (their own notification), none while the chat shows that task.
 */
function board() {
  let now = 1000;
  const feed = new ActivityFeed();
  const b = new StatusBoard(feed, { now: () => now++ });
  const hook = (input: Record<string, unknown>, session = 'task-1') => feed.publish({ kind: 'hook', at: 0, input: { session_id: session, transcript_path: '', cwd: '/w', ...input } as HookInput });
  return {
    b,
    feed,
    prompt: (session = 'task-1', agent?: string) => hook({ hook_event_name: 'UserPromptSubmit', prompt: 'go', ...(agent ? { agent_id: agent } : {}) }, session),
    needsInput: (session = 'task-1', agent?: string) => hook({ hook_event_name: 'Notification', message: 'needs input', notification_type: 'agent_needs_input', ...(agent ? { agent_id: agent } : {}) }, session),
    needsPermission: (session = 'task-1') => hook({ hook_event_name: 'Notification', message: 'needs permission', notification_type: 'permission_prompt' }, session),
  };
}

describe('attention notification', () => {
  it('tells once per time a task starts waiting for an answer', () => {
    const t = board();
    const seen = new Map<string, number>();
    t.prompt();
    expect(attentionToTell(t.b.rows(), seen, new Set())).toEqual([]);
    t.needsInput();
    expect(attentionToTell(t.b.rows(), seen, new Set()).map((r) => r.id)).toEqual(['task-1']);
    // The board changes for other reasons (another task works): no second notice.
    t.prompt('task-2');
    expect(attentionToTell(t.b.rows(), seen, new Set())).toEqual([]);
    // Answered, then waiting again: a new episode, a new notice.
    t.prompt();
    expect(attentionToTell(t.b.rows(), seen, new Set())).toEqual([]);
    t.needsInput();
    expect(attentionToTell(t.b.rows(), seen, new Set()).map((r) => r.id)).toEqual(['task-1']);
    t.b.dispose();
  });

  it('a permission waiting is left to the broker, a stalled loop to its own notification', () => {
    const t = board();
    const seen = new Map<string, number>();
    t.prompt();
    t.needsPermission();
    expect(t.b.rows()[0]).toMatchObject({ status: 'attention', attention: 'permission' });
    t.feed.publish({ kind: 'loop', at: 0, event: { type: 'loop', name: 'l', state: 'stalled', iteration: 3, reasons: ['unchanged'] } });
    expect(t.b.rows().find((r) => r.kind === 'loop')).toMatchObject({ status: 'attention', attention: 'input' });
    expect(attentionToTell(t.b.rows(), seen, new Set())).toEqual([]);
    t.b.dispose();
  });

  it('not while the chat shows the task (or the parent of the sub-agent) that waits', () => {
    const t = board();
    const seen = new Map<string, number>();
    t.prompt('task-1', 'sub-1');
    t.needsInput('task-1', 'sub-1');
    expect(t.b.rows().find((r) => r.id === 'sub-1')).toMatchObject({ kind: 'subagent', status: 'attention' });
    expect(attentionToTell(t.b.rows(), seen, new Set(['task-1']))).toEqual([]);
    t.prompt('task-2');
    t.needsInput('task-2');
    expect(attentionToTell(t.b.rows(), seen, new Set(['task-1'])).map((r) => r.id)).toEqual(['task-2']);
    t.b.dispose();
  });

  it('per task: a chat showing another task does not silence it; each visible chat silences its own', () => {
    const t = board();
    const seen = new Map<string, number>();
    t.prompt('task-1');
    t.prompt('task-2');
    t.needsInput('task-1');
    t.needsInput('task-2');
    // The sidebar shows task-1 and the editor tab task-2: neither is told.
    expect(attentionToTell(t.b.rows(), seen, new Set(['task-1', 'task-2']))).toEqual([]);
    t.prompt('task-1');
    t.prompt('task-2');
    t.needsInput('task-1');
    t.needsInput('task-2');
    // Only the tab (task-2) is visible now: task-1 is told.
    expect(attentionToTell(t.b.rows(), seen, new Set(['task-2'])).map((r) => r.id)).toEqual(['task-1']);
    t.b.dispose();
  });
});
