import { describe, expect, it } from 'vitest';
import type { TaskSummary as StoredSummary } from '../../../src/core/store/types';
import { exportFileName } from '../../../src/extension/history/exportFile';
import { hostname } from 'node:os';
import { describeOwner, historyRows, storedStateOf } from '../../../src/extension/history/historyRows';
import { StoredTaskHandle } from '../../../src/extension/history/storedTask';
import { modelLabel } from '../../../src/shared/domain/models';
import { emptyTranscript } from '../../../src/shared/domain/transcript';
import { matchesQuery, rowStatus } from '../../../webview/pages/HistoryPage';
import { bannerText } from '../../../webview/pages/StoredTaskBanner';
import { FakeTask } from './fakes';

function stored(id: string, over: Partial<StoredSummary> = {}): StoredSummary {
  return { schemaVersion: 1, id, title: `task ${id}`, status: 'completed', createdAt: 1000, updatedAt: 2000, tokens: 1234, costUsd: 0.5, model: 'm', workspace: '/ws', ...over };
}

const opts = { currentId: undefined, workspace: '/ws', hidden: () => false, startedAt: () => 5000 };

describe('history rows', () => {
  it('stored tasks with status, total tokens and cost; resumable only when interrupted, failed or aborted here', () => {
    const rows = historyRows(
      [stored('a', { status: 'interrupted', createdAt: 3000 }), stored('b'), stored('c', { status: 'failed', workspace: '/other' }), stored('d', { status: 'aborted', createdAt: 10 })],
      [],
      opts,
    );
    expect(rows.map((r) => [r.taskId, r.status, r.resumable, r.live])).toEqual([
      ['a', 'interrupted', true, false],
      ['b', 'completed', false, false],
      ['c', 'failed', false, false],
      ['d', 'aborted', true, false],
    ]);
    expect(rows[0]).toMatchObject({ totalTokens: 1234, costUsd: 0.5, startedAt: 3000, updatedAt: 2000, done: true });
    expect(rows[2]!.otherWorkspace).toBe('/other');
  });

  it('a task running in another window is marked and not resumable from the list', () => {
    const since = new Date(2026, 0, 2, 10, 31).getTime();
    const [row] = historyRows([stored('a', { status: 'running', heldElsewhere: { pid: 42, host: hostname(), since, label: 'VS Code window 42' } })], [], opts);
    // The window in words a person knows: no pid, no host name of this machine.
    expect(row).toMatchObject({ state: 'running elsewhere', resumable: false });
    expect(row!.heldElsewhere).toMatch(/^another VS Code window \(since \d{1,2}:31( [AP]M)?\)$/);
    expect(describeOwner({ pid: 42, host: 'build-box', since, label: 'keel run' }, 'laptop')).toMatch(/^a keel run in a terminal on build-box \(since /);
    expect(rowStatus(row!)).toBe('running elsewhere');
    // Opened, it offers Take over.
    expect(storedStateOf(stored('a', { status: 'running', heldElsewhere: { pid: 42, host: 'h', since: 1 } }), '/ws')).toMatchObject({ resumable: true });
  });

  it('live tasks overlay their stored row; live tasks the store lacks are added; hidden ones left out', async () => {
    const live = new FakeTask('a', { prompt: 'live one', provider: { provider: 'demo', model: 'demo' } });
    const extra = new FakeTask('x', { prompt: 'not stored', provider: { provider: 'demo', model: 'demo' } });
    await new Promise((r) => setTimeout(r, 0));
    const rows = historyRows([stored('a', { status: 'running' }), stored('gone')], [live, extra], { ...opts, currentId: 'a', hidden: (id) => id === 'gone' });
    expect(rows.map((r) => [r.taskId, r.live, r.state, r.current])).toEqual([
      ['x', true, 'running', false],
      ['a', true, 'running', true],
    ]);
    expect(rowStatus(rows[1]!)).toBe('running');
  });

  it('rows name their model, so a demo task reads "demo model"', () => {
    const live = new FakeTask('x', { prompt: 'tour', provider: { provider: 'demo', model: 'demo' } });
    const rows = historyRows([stored('a', { model: 'demo' }), stored('b', { model: 'claude-opus-5-5' })], [live], opts);
    expect(rows.map((r) => [r.taskId, r.model])).toEqual([
      ['x', 'demo'],
      ['a', 'demo'],
      ['b', 'claude-opus-5-5'],
    ]);
    expect(rows.map((r) => modelLabel(r.model ?? ''))).toEqual(['demo model', 'demo model', 'claude-opus-5-5']);
  });

  it('search matches title, status and id prefix', () => {
    const [row] = historyRows([stored('abcd1234', { title: 'Fix the parser', status: 'interrupted' })], [], opts);
    expect(['parser', 'INTERRUPTED', 'abcd', ''].map((q) => matchesQuery(row!, q))).toEqual([true, true, true, true]);
    expect(matchesQuery(row!, 'compiler')).toBe(false);
  });
});

describe('stored task handle and banner', () => {
  it('reads as its stored status, not busy, and refuses nothing loudly', async () => {
    const t = new StoredTaskHandle('t', { ...emptyTranscript('t', 'title', 'm'), state: 'running' }, { status: 'interrupted', resumable: true });
    expect(t.transcript()).toMatchObject({ state: 'interrupted', tags: ['settled', 'interrupted'], done: true });
    expect((await t.settled()).status).toBe('interrupted');
    expect(bannerText({ status: 'interrupted', resumable: true })).toMatch(/interrupted.*Resume/);
    expect(bannerText({ status: 'running', resumable: true, heldElsewhere: 'another VS Code window (since 10:31)' })).toBe(
      'Running in another VS Code window (since 10:31). Shown read-only: continue it there, or Take over once it has stopped.',
    );
    expect(bannerText({ status: 'completed', resumable: true, heldElsewhere: 'another VS Code window (since 10:31)' })).toMatch(/^Open in another VS Code window/);
  });
});

describe('export file names', () => {
  it('are safe and recognisable', () => {
    expect(exportFileName('Fix: the "parser" / lexer?', '0123456789abcdef', 'markdown')).toBe('keel-fix-the-parser-lexer-01234567.md');
    expect(exportFileName('¿¿¿', 'abcdefgh12', 'json')).toBe('keel-abcdefgh.json');
  });
});
