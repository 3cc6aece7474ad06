import { afterAll, describe, expect, it } from 'vitest';
import { callMachine } from '../../../src/core/machines/call/call.machine';
import { streamMachine } from '../../../src/core/machines/stream/stream.machine';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { turnMachine } from '../../../src/core/machines/turn/turn.machine';
import { callPaths, compileCall } from './callModel';
import { HOST_MODELS, hostPaths, replayHost } from './hostMachines';
import { CoverageRecorder, formatCoverage } from './coverage';
import { streamPaths, replayStream } from './streamModel';
import { replay } from './system';
import { compileTask, taskPaths } from './taskModel';
import { compileTurn, TURN_VARIANTS, turnPaths } from './turnModel';

/**
 * Model-based tests: paths generated from each machine definition with xstate/graph, replayed
 * through the real actors (see system.ts), with coverage of every state and transition of the
 * catalog (`describeMachine`) measured from what the real actors did, printed, and asserted.
 */
const recorder = new CoverageRecorder();
/** The same, for replays with no injected actor: what the real parts alone reach. */
const realOnly = new CoverageRecorder();
const label = (events: { type: string; tag?: string }[]) => events.map((e) => (e.tag ? `${e.type.replace(/^xstate\.(done|error)\.actor\.(0\.)?/, '$1:')}[${e.tag}]` : e.type)).join(' › ') || '(initial)';

describe('model-based: stream', () => {
  const paths = streamPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const { observed, expected } = await replayStream(path, recorder, realOnly);
    expect(observed).toEqual(expected);
  });
});

describe('model-based: call', () => {
  const paths = callPaths();
  it.each(paths.map((p) => [`${p.duplicate ? 'duplicate: ' : ''}${label(p.events)}`, p] as const))('%s', async (_name, path) => {
    const c = compileCall(path);
    const { observed } = await replay(c.script, 'call', c.expected, c.triggers, recorder, {}, realOnly);
    expect(observed).toEqual(c.expected);
  });
});

for (const variant of TURN_VARIANTS) {
  describe(`model-based: turn (${variant.name})`, () => {
    const paths = turnPaths(variant);
    it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
      const c = compileTurn(path, variant);
      const { observed } = await replay(c.script, 'turn', c.expected, c.triggers, recorder, variant.messages ? { messages: variant.messages } : {}, c.script.injected ? undefined : realOnly);
      if (c.prefixOk) expect(observed.slice(0, c.expected.length)).toEqual(c.expected);
      else expect(observed).toEqual(c.expected);
    });
  });
}

describe('model-based: task', () => {
  const paths = taskPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const c = compileTask(path);
    const { observed } = await replay(c.script, 'task', c.expected, c.triggers, recorder, {}, realOnly);
    expect(observed).toEqual(c.expected);
  });
});

for (const model of HOST_MODELS) {
  describe(`model-based: ${model.machine.id}`, () => {
    const paths = hostPaths(model);
    it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
      const { observed, expected, prefixOk } = await replayHost(model, path, recorder);
      expect(prefixOk ? observed.slice(0, expected.length) : observed).toEqual(expected);
    });
  });
}

describe('model-based: coverage of the catalog', () => {
  const machines = [...new Set([taskMachine, turnMachine, callMachine, streamMachine, ...HOST_MODELS.map((m) => m.machine)])];
  afterAll(() => {
    const injectedOnly = [taskMachine, turnMachine, callMachine, streamMachine].flatMap((m) => realOnly.report(m).transitions.missing.map((t) => `  ${m.id}: ${t}`));
    process.stdout.write(
      `\nModel-based coverage (real actors):\n${machines.map((m) => formatCoverage(recorder.report(m))).join('\n')}\n` +
        `Reached only through an injected actor (no real producer here: MCP, a tool runner or permission check that rejects, a Stop hook sending the agent back — that one is exercised by test/integration/cli/hooks.test.ts):\n${injectedOnly.join('\n') || '  (none)'}\n`,
    );
  });
  it.each(machines.map((m) => [m.id, m] as const))('%s: every state and transition was taken by the real actors', (_id, machine) => {
    const c = recorder.report(machine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});
