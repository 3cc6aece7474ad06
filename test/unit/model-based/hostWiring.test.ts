import { afterAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../../../src/cli/run';
import { appSessionMachine } from '../../../src/core/machines/appSession/appSession.machine';
import { sessionMachine } from '../../../src/core/machines/session/session.machine';
import { appSessionPaths, replayAppSession, UNREACHABLE_HERE } from './appSessionWiring';
import { CoverageRecorder, formatCoverage } from './coverage';
import { replaySession, sessionPaths } from './sessionWiring';

/**
 * Model-based tests of the host-side lifetimes, replayed against the real wiring (no VS Code):
 * each view's session through ChatController and ViewConnection, and the window's app session
 * through windowLifetime and ChatController. Coverage counts only what these replays' actors did;
 * what the window's wiring cannot reach is named, not counted.
 */
const recorder = new CoverageRecorder();
/** What neither host can reach: their save hooks do not throw (keel run's init failure is replayed below through runCommand). */
const UNREACHABLE = UNREACHABLE_HERE.filter((t) => !t.startsWith('init -> exit'));
const label = (events: { type: string; tag?: string }[]) =>
  events.map((e) => (e.tag ? `${e.type.replace(/^xstate\.(done|error)\.actor\.0\.appSession\./, '$1:')}[${e.tag}]` : e.type)).join(' › ') || '(initial)';

describe('model-based wiring: a chat view (session machine, ViewConnection + ChatController)', () => {
  const paths = sessionPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const { observed, expected, problems } = await replaySession(path, recorder);
    expect(problems).toEqual([]);
    expect(observed).toEqual(expected);
  });
});

describe('model-based wiring: the window (appSession machine, windowLifetime + ChatController)', () => {
  const paths = appSessionPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const { observed, expected, problems, prefixOk } = await replayAppSession(path, recorder);
    expect(problems).toEqual([]);
    expect(prefixOk ? observed.slice(0, expected.length) : observed).toEqual(expected);
  });
});

describe('keel run (appSession machine, runCommand): what the window cannot reach', () => {
  it('a command line that cannot run ends the session at init (init -> exit), with one usage line and exit 2', async () => {
    const lines: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      expect(await runCommand(['--no-such-flag', 'hi'], { inspect: (e) => recorder.inspect(e) })).toBe(2);
    } finally {
      stderr.mockRestore();
    }
    expect(lines).toEqual(['keel run: unknown option --no-such-flag (see keel run --help)\n']);
  });
});

describe('model-based wiring: coverage', () => {
  afterAll(() => {
    process.stdout.write(
      `\nModel-based coverage through the host wiring:\n${[sessionMachine, appSessionMachine].map((m) => formatCoverage(recorder.report(m))).join('\n')}\n` +
        `Not reachable through the window's wiring nor keel run's (named, not counted):\n${UNREACHABLE.map((t) => `  appSession: ${t}`).join('\n')}\n`,
    );
  });
  it('session: every state and transition was taken through ViewConnection', () => {
    const c = recorder.report(sessionMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
  it('appSession: every state and transition was taken through windowLifetime or keel run, except those named as unreachable in both', () => {
    const c = recorder.report(appSessionMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: UNREACHABLE });
  });
});
