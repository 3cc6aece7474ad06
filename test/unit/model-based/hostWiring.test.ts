import { afterAll, describe, expect, it } from 'vitest';
import { sessionMachine } from '../../../src/core/machines/session/session.machine';
import { CoverageRecorder, formatCoverage } from './coverage';
import { replaySession, sessionPaths } from './sessionWiring';

/**
 * Model-based tests of the host-side lifetimes, replayed against the real wiring (no VS Code):
 * each view's session through ChatController and ViewConnection. Coverage counts only what these
 * replays' actors did.
 */
const recorder = new CoverageRecorder();
const label = (events: { type: string; tag?: string }[]) => events.map((e) => (e.tag ? `${e.type}[${e.tag}]` : e.type)).join(' › ') || '(initial)';

describe('model-based wiring: a chat view (session machine, ViewConnection + ChatController)', () => {
  const paths = sessionPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const { observed, expected, problems } = await replaySession(path, recorder);
    expect(problems).toEqual([]);
    expect(observed).toEqual(expected);
  });
});

describe('model-based wiring: coverage', () => {
  afterAll(() => {
    process.stdout.write(`\nModel-based coverage through the host wiring:\n${formatCoverage(recorder.report(sessionMachine))}\n`);
  });
  it('session: every state and transition was taken through ViewConnection', () => {
    const c = recorder.report(sessionMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});
