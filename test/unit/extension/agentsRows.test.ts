import { describe, expect, it } from 'vitest';
import { agentItems, rowsSignature } from '../../../src/extension/agentsRows';
import type { AgentRow } from '../../../src/shared/domain/agents';
import type { LoopEvent } from '../../../src/shared/domain/loop';

/** The Agents tree's items from the board's rows: hierarchy, status words, figures, what a click opens. */
const row = (over: Partial<AgentRow> & Pick<AgentRow, 'id'>): AgentRow => ({ kind: 'task', title: over.id, status: 'working', startedAt: 0, since: 0, tokens: 0, costUsd: 0, ...over });

describe('agentItems', () => {
  it('puts sub-agents under their task and iterations under their loop; a loop opens its loop page, not a chat', () => {
    const items = agentItems(
      [
        row({ id: 'loop:port', kind: 'loop', title: 'port' }),
        row({ id: 't1', parentId: 'loop:port', title: 'port: iteration 1' }),
        row({ id: 't2', title: 'fix the tests', status: 'attention', attention: 'permission', tokens: 12_345, costUsd: 0.034, startedAt: 0 }),
        row({ id: 's1', kind: 'subagent', parentId: 't2', title: 'search', status: 'done' }),
      ],
      125_000,
    );
    expect(items.map((i) => [i.label, i.children.map((c) => c.label)])).toEqual([
      ['Loop port', ['port: iteration 1']],
      ['fix the tests', ['search']],
    ]);
    expect(items[0]!.taskId).toBeUndefined();
    expect(items[0]!.loopName).toBe('port');
    expect(items[1]!.loopName).toBeUndefined();
    expect(items[0]!.children[0]!.taskId).toBe('t1');
    expect(items[1]).toMatchObject({ taskId: 't2', description: 'needs you (permission) · 2m 5s · 12.3k tok · $0.03', icon: 'bell-dot' });
    expect(items[1]!.children[0]).toMatchObject({ description: 'done · 2m 5s · 0 tok · $0.00', icon: 'check' });
  });

  it('keeps a row whose parent is gone at the top level', () => {
    expect(agentItems([row({ id: 's', kind: 'subagent', parentId: 'gone' })], 0).map((i) => i.id)).toEqual(['s']);
  });

  it('the tree refreshes only for what it shows: a status, a title, tokens; not the time of an event', () => {
    const base = [row({ id: 't1', status: 'working', since: 1 })];
    expect(rowsSignature([row({ id: 't1', status: 'working', since: 2 })])).toBe(rowsSignature(base));
    expect(rowsSignature([row({ id: 't1', status: 'attention', attention: 'permission', since: 2 })])).not.toBe(rowsSignature(base));
    expect(rowsSignature([row({ id: 't1', status: 'working', tokens: 10 })])).not.toBe(rowsSignature(base));
    expect(rowsSignature([...base, row({ id: 't2' })])).not.toBe(rowsSignature(base));
  });
});

describe('a loop that ran out of iterations', () => {
  it('is shown as stopped at its limit, not done, through the real status board', async () => {
    const { ActivityFeed } = await import('../../../src/core/events/activityFeed');
    const { StatusBoard } = await import('../../../src/core/agents/board');
    const feed = new ActivityFeed();
    const board = new StatusBoard(feed);
    const loop = (event: LoopEvent) => feed.publish({ kind: 'loop', at: 0, event });
    try {
      loop({ type: 'loop', name: 'port', state: 'started', iteration: 0 });
      loop({ type: 'loop', name: 'port', state: 'stopped', iteration: 2, reasons: ['stopped: iteration limit reached (2 iterations) without reaching the goal'] });
      const r = board.row('loop:port')!;
      expect(r.status).not.toBe('done');
      const item = agentItems([r], 0)[0]!;
      expect(item.description).toMatch(/^stopped: iteration limit reached · /);
      expect(item.icon).toBe('error');
      // Continued again (a new run of the loop): the note goes.
      loop({ type: 'loop', name: 'port', state: 'resumed', iteration: 2 });
      expect(board.row('loop:port')!.note).toBeUndefined();
    } finally {
      board.dispose();
    }
  });
});
