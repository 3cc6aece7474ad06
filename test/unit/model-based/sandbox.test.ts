import { afterAll, describe, expect, it } from 'vitest';
import { sandboxMachine } from '../../../src/core/machines/sandbox/sandbox.machine';
import { detectSandbox } from '../../../src/core/sandbox/bwrap';
import { CoverageRecorder, formatCoverage } from './coverage';
import { expectedOutcome, replaySandbox, sandboxPaths } from './sandboxModel';

/**
 * Model-based tests of the sandbox machine: every path xstate/graph finds, replayed through the
 * Bash tool with real bwrap and the real network proxy (see sandboxModel.ts); each asserts the
 * machine's states and what the command really did (ran directly, ran sandboxed — with the proxy
 * when the allow-list is set — or was refused). Coverage counts only these real actors.
 */
const recorder = new CoverageRecorder();
const available = detectSandbox().available;
const label = (p: ReturnType<typeof sandboxPaths>[number]) =>
  `${p.variant}: ${p.events.map((e) => `${e.type.replace(/^xstate\.(done|error)\.actor\./, '$1:')}${e.tag ? `[${e.tag}]` : ''}`).join(' › ') || '(no actor)'}`;

describe.runIf(available)('model-based: sandbox (real bwrap)', () => {
  const paths = sandboxPaths();
  it.each(paths.map((p) => [label(p), p] as const))('%s', async (_name, path) => {
    const r = await replaySandbox(path, recorder);
    expect(r.observed).toEqual(r.expected);
    expect(r.outcome, r.content).toBe(expectedOutcome(path));
  });

  afterAll(() => {
    process.stdout.write(`\nModel-based coverage (real actors):\n${formatCoverage(recorder.report(sandboxMachine))}\n`);
  });
  it('every state and transition of the sandbox machine was taken by the real actors', () => {
    const c = recorder.report(sandboxMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});
