import { describe, expect, it } from 'vitest';
import { describeWorker, describePool, type PoolStatus, type WorkerStatus } from '../../../src/core/workers/poolStatus';
import { badgeFor } from '../../../src/extension/permissions/waiting';
import { RUN_PHASES } from '../../../src/shared/domain/events';
import type { PendingPermission } from '../../../src/shared/protocol/chatMessages';
import { agentStatusWords, loopStatusWords, loopStopWords } from '../../../src/shared/words/agents';
import { ownerWords } from '../../../src/shared/words/owners';
import { phaseLabel, phaseTimes, phaseWords, stateLook } from '../../../src/shared/words/task';
import { poolHeadline, workerStateWords } from '../../../src/shared/words/workers';

/** One place maps states and tags to the words people read (src/shared/words/). */
const RAW = /[a-z][A-Z]|\./;

const worker = (over: Partial<WorkerStatus> = {}): WorkerStatus => ({ id: 'w1', state: 'ready', pid: 4242, taskId: null, startedAt: 0, lastActivityAt: 0, queriesProcessed: 1, rssBytes: 48 * 1024 * 1024, ...over });
const pool = (workers: WorkerStatus[], over: Partial<PoolStatus> = {}): PoolStatus => ({
  state: 'atCapacity',
  ownerPid: 1,
  owner: 'VS Code window 1',
  max: 4,
  strategy: 'lru',
  workers,
  waiting: 0,
  stats: { spawned: 0, evicted: 0, crashed: 0, reaped: 0, rejected: 0 },
  at: 0,
  ...over,
});

describe('words for states', () => {
  it('a pool says how many workers and what they do, never its machine state ("atCapacity")', () => {
    const idle = [1, 2, 3, 4].map((i) => worker({ id: `w${i}` }));
    expect(poolHeadline(pool(idle))).toBe('4 workers, all idle');
    expect(poolHeadline(pool([worker({ state: 'busy' }), worker({ state: 'busy' })]))).toBe('2 workers, both running a task');
    expect(poolHeadline(pool([worker({ state: 'busy' }), worker(), worker({ state: 'busy' })]))).toBe('3 workers: 2 running a task, 1 idle');
    expect(poolHeadline(pool([worker({ state: 'busy' })], { waiting: 2, max: 1 }))).toBe('1 worker, running a task; 2 tasks wait for a free worker (at most 1)');
    expect(poolHeadline(pool([]))).toBe('No workers running');
    expect(describePool(pool(idle))).toBe('VS Code window 1 (pid 1): 4 workers, all idle');
    for (const s of ['starting', 'ready', 'busy', 'shuttingDown', 'dead', 'somethingNew']) expect(workerStateWords(s), s).not.toMatch(RAW);
  });

  it('a worker names its task by the title a person knows, its id and pid beside', () => {
    const titleOf = (id: string) => (id === 'task-1234567890' ? 'Fix the login bug' : undefined);
    expect(describeWorker(worker({ state: 'busy', taskId: 'task-1234567890', queriesProcessed: 5 }), 192_000, titleOf)).toEqual({
      label: 'Running “Fix the login bug”',
      description: 'w1 · pid 4242',
      detail: 'up 3 m 12 s · 5 runs · 48 MB',
    });
    expect(describeWorker(worker({ taskId: 'task-1234567890' }), 0, titleOf)).toMatchObject({ label: 'Idle', description: 'w1 · pid 4242 · last ran “Fix the login bug”' });
    expect(describeWorker(worker({ state: 'busy', taskId: 'abcdef1234' }), 0).label).toBe('Running task abcdef12');
  });

  it('every run phase reads as words; the badge names only the phases that say more than "Working"', () => {
    for (const p of RUN_PHASES) expect(phaseWords(p), p).not.toMatch(RAW);
    expect(phaseWords('processingToolEvents')).toBe('Working');
    expect(phaseLabel('processingToolEvents')).toBeUndefined();
    expect(phaseLabel('memorySearch')).toBe('Searching memory');
    expect(phaseTimes({ runnerRunning: 1500, processingToolEvents: 500, memorySearch: 40 })).toBe('Working 2.0 s, Searching memory 40 ms');
  });

  it('a task state the table does not name reads by its tags, not by its name', () => {
    expect(stateLook('finishingUp', ['running']).label).toBe('Working');
    expect(stateLook('givenUp', ['settled', 'failed']).label).toBe('Failed');
    expect(stateLook('lostWorker', ['settled', 'interrupted']).label).toBe('Interrupted');
  });

  it('agents, loops and other windows in words', () => {
    expect(agentStatusWords({ status: 'attention', attention: 'permission' })).toBe('needs you (permission)');
    expect(agentStatusWords({ status: 'error' })).toBe('failed');
    expect(loopStatusWords({ status: 'continuing', driver: 'here' })).toBe('running');
    expect(loopStatusWords({ status: 'active', driver: 'elsewhere', heldBy: ownerWords('VS Code window 12186') })).toBe('running in another VS Code window');
    expect(ownerWords('keel run')).toBe('a keel run in a terminal');
    expect(ownerWords(undefined)).toBe('another window or process');
    expect(loopStopWords('end_turn: Iteration two finished.')).toBe('Ended with: Iteration two finished.');
    expect(loopStopWords('max_tokens: and then')).toBe('Cut off at the answer length limit: and then');
    expect(loopStopWords('failed: no_api_key: No Anthropic API key is set.')).toBe('Failed: No Anthropic API key is set.');
    expect(loopStopWords('aborted')).toBe('Cancelled');
    expect(loopStopWords('something else: entirely')).toBe('something else: entirely');
  });
});

describe('the activity-bar badge', () => {
  it('counts waiting prompts, and once none waits is a badge of 0 (which VS Code clears), never left as it was', () => {
    const p = { requestId: 'r', taskId: 't', toolCallId: 'c', tool: 'Edit', input: {}, summary: 'Edit a.ts', reason: 'editing a file' } satisfies PendingPermission;
    expect(badgeFor([p])).toEqual({ value: 1, tooltip: 'Keel is waiting for permission' });
    expect(badgeFor([p, { ...p, requestId: 'r2' }])).toEqual({ value: 2, tooltip: 'Keel is waiting for 2 permission answers' });
    expect(badgeFor([])).toEqual({ value: 0, tooltip: '' });
  });
});
