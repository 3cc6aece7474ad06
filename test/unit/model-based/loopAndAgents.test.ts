import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot, StateValue } from 'xstate';
import { StatusBoard } from '../../../src/core/agents/board';
import { ActivityFeed, type ActivityEvent } from '../../../src/core/events/activityFeed';
import type { HookInput } from '../../../src/core/hooks/types';
import { agentStatusMachine, type AgentStatusEvent } from '../../../src/core/machines/agentStatus/agentStatus.machine';
import { loopModeMachine, type IterationEnd, type LoopModeNotice } from '../../../src/core/machines/loopMode/loopMode.machine';
import { CoverageRecorder, formatCoverage } from './coverage';
import { replayWithScriptedActors, type ScriptedModel } from './scriptedReplay';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelPath } from './paths';

/**
 * Model-based tests of the two machines of loop mode.
 * - loopMode, with its actors scripted: every transition path xstate/graph finds, replayed with
 *   in-memory stand-ins for runIteration, recordIteration and prepareNext that complete as the
 *   path says (an iteration ends, the judge says complete / stalled / continue, recording fails…)
 *   and the person's START / RESUME / CANCEL. Each replay checks the states and what the machine
 *   tells the loop runner (its notices) and asks of its actors (which iteration to run, judge or
 *   prepare). The real actors (tasks, the judge, the loop's files) are tested through LoopRunner
 *   in test/unit/loop/runner.test.ts and keel loop in test/integration/cli/loop.test.ts; the
 *   coverage below is the definition's, under scripted actors.
 * - agentStatus, through the real StatusBoard: every path, fed the hook and task events a running
 *   task really publishes; the row the board shows must follow the model after each event.
 */
const scripted = new CoverageRecorder();
const recorder = new CoverageRecorder();

const invoked = (s: AnyMachineSnapshot): { id: string; src: string }[] => s._nodes.flatMap((n) => n.invoke.map((i) => ({ id: i.id, src: String(i.src) })));
const end = (status: IterationEnd['status']): IterationEnd => ({ taskId: 't', status, stopReason: 'end_turn', finalMessage: 'ok', errors: [], costUsd: 0 });

const LOOP_MODEL: ScriptedModel = {
  machine: loopModeMachine,
  input: { name: 'l', iteration: 0 },
  events: (s) => {
    const evs = [{ type: 'START' }, { type: 'RESTORE_STALLED', reasons: ['saved as stalled'] }, { type: 'RESUME' }, { type: 'CANCEL' }];
    for (const i of invoked(s)) {
      if (i.src === 'runIteration') evs.push(doneEvent(i.id, end('completed'), 'completed'), errorEvent(i.id, new Error('cannot start')));
      else if (i.src === 'recordIteration') {
        for (const verdict of ['complete', 'stopped', 'stalled', 'continue'] as const) evs.push(doneEvent(i.id, { verdict, reasons: [verdict] }, verdict));
        evs.push(errorEvent(i.id, new Error('disk full')));
      } else evs.push(doneEvent(i.id, undefined, 'ok'), errorEvent(i.id, new Error('cannot save')));
    }
    return evs;
  },
};

/** What the loop runner should hear and be asked along a path, from the path alone. */
function expectedOutputs(path: ModelPath): { notices: LoopModeNotice[]; started: { src: string; input: unknown }[] } {
  const notices: LoopModeNotice[] = [];
  const started: { src: string; input: unknown }[] = [];
  let done = 0;
  const run = () => {
    notices.push({ kind: 'iterationStarted', iteration: done + 1 });
    started.push({ src: 'runIteration', input: { name: 'l', n: done + 1 } });
  };
  path.values.forEach((value, i) => {
    const event = path.events[i];
    if (!event) return;
    const next = JSON.stringify(path.values[i + 1]);
    const type = event.type;
    if ((type === 'START' || type === 'RESUME' || /prepareNext|continuing/.test(type)) && next === JSON.stringify({ active: 'iterating' })) run();
    else if (/^xstate\.(done|error)\.actor\..*(runIteration|iterating)/.test(type)) started.push({ src: 'recordIteration', input: { name: 'l', n: done + 1, end: expect.anything() } });
    else if (/^xstate\.done\.actor\..*(recordIteration|judging)/.test(type)) {
      done++;
      const verdict = event.tag as 'complete' | 'stalled' | 'continue';
      notices.push({ kind: 'judged', iteration: done, verdict, reasons: [verdict] });
      if (verdict === 'continue') started.push({ src: 'prepareNext', input: { name: 'l', n: done + 1 } });
    } else if (/^xstate\.error\.actor\..*(recordIteration|judging)/.test(type)) done++;
    if (next === '"cancelled"' && JSON.stringify(value) !== '"cancelled"') notices.push({ kind: 'cancelled', iteration: done });
  });
  return { notices, started };
}

describe('model-based: loopMode (scripted actors; the real ones: loop/runner.test.ts)', () => {
  const paths = transitionPaths(LOOP_MODEL.machine, { input: LOOP_MODEL.input, events: LOOP_MODEL.events });
  it('has paths to every verdict and to cancelled', () => {
    const ends = new Set(paths.map((p) => JSON.stringify(p.values.at(-1))));
    for (const s of ['"complete"', '"stopped"', '"stalled"', '"cancelled"', '"continuing"']) expect(ends).toContain(s);
  });
  it.each(paths.map((p) => [p.events.map((e) => e.tag ?? e.type.replace(/^xstate\.(done|error)\.actor\.[^.]*\.?/, '$1:')).join(' › '), p] as const))('%s', async (_n, path) => {
    const notices: LoopModeNotice[] = [];
    const r = await replayWithScriptedActors({ ...LOOP_MODEL, actions: { notify: (_: unknown, n: LoopModeNotice) => void notices.push(n) } }, path, scripted);
    expect(r.observed).toEqual(r.expected);
    const want = expectedOutputs(path);
    expect(notices).toEqual(want.notices);
    expect(r.started).toEqual(want.started);
  });
  it('every state and transition of loopMode was taken (under scripted actors)', () => {
    const c = scripted.report(loopModeMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});

/** The activity a real task publishes for each machine event (what statusEvents.ts maps back). */
function activityFor(e: AgentStatusEvent): ActivityEvent {
  const hook = (input: Record<string, unknown>): ActivityEvent => ({ kind: 'hook', at: 0, input: { session_id: 'task-1', transcript_path: '', cwd: '/w', ...input } as HookInput });
  switch (e.type) {
    case 'PROMPT':
      return hook({ hook_event_name: 'UserPromptSubmit', prompt: 'go' });
    case 'ACTIVITY':
      return hook({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: {}, tool_use_id: 'x' });
    case 'NEEDS_PERMISSION':
      return hook({ hook_event_name: 'Notification', message: 'Keel needs your permission to use Bash', notification_type: 'permission_prompt' });
    case 'NEEDS_INPUT':
      return hook({ hook_event_name: 'Notification', message: 'Keel needs your input', notification_type: 'agent_needs_input' });
    case 'ANSWERED':
      return { kind: 'task', at: 0, event: { type: 'permission', taskId: 'task-1', requestId: 'r', toolCallId: 'c', tool: 'Bash', decision: 'allow' } };
    case 'COMPACTING':
      return hook({ hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' });
    case 'STOPPED':
      return hook({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' });
    case 'FAILED':
      return { kind: 'task', at: 0, event: { type: 'done', taskId: 'task-1', status: 'failed', stopReason: null } };
    case 'USAGE':
      return { kind: 'task', at: 0, event: { type: 'usage', taskId: 'task-1', inputTokens: e.tokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: e.costUsd, totalCostUsd: e.costUsd } };
  }
}

const AGENT_EVENTS: AgentStatusEvent[] = [
  { type: 'PROMPT' },
  { type: 'ACTIVITY' },
  { type: 'NEEDS_PERMISSION' },
  { type: 'NEEDS_INPUT' },
  { type: 'ANSWERED' },
  { type: 'COMPACTING' },
  { type: 'STOPPED' },
  { type: 'FAILED' },
  { type: 'USAGE', tokens: 100, costUsd: 0.5 },
];

function shown(v: StateValue): string {
  return typeof v === 'string' ? v : `${Object.keys(v)[0]}.${String(Object.values(v)[0])}`;
}

describe('model-based: agentStatus through the status board', () => {
  const paths: ModelPath[] = transitionPaths(agentStatusMachine, { input: undefined, events: () => AGENT_EVENTS, context: (s) => (s.context as { tokens: number }).tokens > 0 });
  it.each(paths.map((p) => [p.events.map((e) => e.type).join(' › ') || '(start)', p] as const))('%s', (_n, path) => {
    const feed = new ActivityFeed();
    const board = new StatusBoard(feed, { inspect: recorder.inspect });
    try {
      // The task exists from its SessionStart on: waiting until it gets its prompt.
      feed.publish({ kind: 'hook', at: 0, input: { hook_event_name: 'SessionStart', session_id: 'task-1', transcript_path: '', cwd: '/w', source: 'startup' } });
      const seen: string[] = [];
      const row = () => board.row('task-1')!;
      seen.push(row().attention ? `${row().status}.${row().attention}` : row().status);
      for (const e of path.events) {
        feed.publish(activityFor(e as AgentStatusEvent));
        seen.push(row().attention ? `${row().status}.${row().attention}` : row().status);
      }
      expect(dedupe(seen.map((s) => s as StateValue))).toEqual(dedupe(path.values.map(shown)));
      const usage = path.events.filter((e) => e.type === 'USAGE').length;
      expect(row().tokens).toBe(usage * 100);
    } finally {
      board.dispose();
    }
  });
  it('every state and transition of agentStatus was taken', () => {
    const c = recorder.report(agentStatusMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
  afterAll(() => {
    process.stdout.write(
      `\nModel-based coverage: loopMode under scripted actors, agentStatus through the real StatusBoard:\n${formatCoverage(scripted.report(loopModeMachine))}\n${formatCoverage(recorder.report(agentStatusMachine))}\n`,
    );
  });
});
