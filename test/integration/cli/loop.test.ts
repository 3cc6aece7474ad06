import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `keel loop` as a person runs it: the built CLI as a child process, the real Anthropic provider
 * against the fake model server, in the default mode (headless, anything that would ask is
 * denied — yet the loop's own progress file is written without a prompt). Each iteration's
 * conversation is read from the requests the server received.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const loop = (...args: string[]) => runCli(['loop', ...args, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json'], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-loop-cli-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-loop-cli-home-'));
});
afterEach(async () => {
  await server.close();
});

const PROGRESS = '.keel/loop/tests/progress.md';
const writeProgress = (content: string) => ({ blocks: [{ type: 'tool_use' as const, name: 'Write', input: { file_path: PROGRESS, content } }] });
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });
type Body = { messages: { role: string; content: unknown }[] };
const bodyOf = (i: number) => server.requests[i]!.body as Body;

describe('keel loop against the fake model server', () => {
  // On workers too: the progress file's exception must reach the worker that decides the write.
  it.each([
    ['in this process', []],
    ['on a worker', ['--workers', '1']],
  ])('iteration 1 writes progress, iteration 2 the stop word: complete after 2 iterations, each a fresh conversation (%s)', async (_where, extra) => {
    server.enqueue(writeProgress('# Progress\n- parser written\n'), say('Iteration one finished: parser written.'), writeProgress('# Progress\n- parser written\n- tests pass\nDONE\n'), say('All tests pass.'));
    const r = await loop('make every test pass', '--name', 'tests', '--max-iterations', '5', ...extra);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(server.requests).toHaveLength(4);
    // Each iteration starts with one user message: the anchor, the progress file and the guardrails.
    const firsts = [0, 2].map(bodyOf);
    for (const b of firsts) expect(b.messages).toHaveLength(1);
    expect(JSON.stringify(firsts[0])).toContain('make every test pass');
    expect(JSON.stringify(firsts[1])).toContain('parser written');
    // Nothing of iteration 1's conversation is carried over but the progress file.
    expect(JSON.stringify(firsts[1])).not.toContain('Iteration one finished');
    expect(JSON.stringify(firsts[1])).not.toContain('tool_use');

    const judged = ofType(r.events, 'loop').filter((e) => e.state === 'judged');
    expect(judged.map((e) => [e.iteration, e.verdict])).toEqual([
      [1, 'continue'],
      [2, 'complete'],
    ]);
    expect(ofType(r.events, 'loop').at(-1)).toMatchObject({ state: 'complete', iteration: 2 });
    // The writes were not asked about (default mode, headless) and landed.
    expect(ofType(r.events, 'permission').map((e) => e.decision)).toEqual(['allow', 'allow']);
    const dir = join(workspace, '.keel/loop/tests');
    expect(readFileSync(join(dir, 'progress.md'), 'utf8')).toContain('DONE');
    expect(readFileSync(join(dir, 'anchor.md'), 'utf8')).toContain('make every test pass');
    expect(existsSync(join(dir, 'guardrails.md'))).toBe(true);
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { status: string; iteration: number; iterations: { verdict: string; taskId: string }[] };
    expect(state).toMatchObject({ status: 'complete', iteration: 2 });
    expect(state.iterations.map((i) => i.verdict)).toEqual(['continue', 'complete']);
    expect(new Set(state.iterations.map((i) => i.taskId)).size).toBe(2);
    expect(r.stderr()).toContain('complete after 2 iterations');
  });

  it('stalls when the progress file stays the same for 3 iterations (exit 4), and --resume continues from state.json', async () => {
    server.enqueue(say('Nothing to do.'), say('Still nothing.'), say('Nothing again.'));
    const stalled = await loop('an impossible goal', '--name', 'tests');
    expect((await stalled.exit).code, stalled.stderr()).toBe(4);
    expect(server.requests).toHaveLength(3);
    expect(ofType(stalled.events, 'loop').filter((e) => e.state === 'judged').map((e) => e.verdict)).toEqual(['continue', 'continue', 'stalled']);
    expect(stalled.stderr()).toContain('stalled after 3 iterations and needs you');
    expect(stalled.stderr()).toContain('keel loop --resume tests');
    const state = JSON.parse(readFileSync(join(workspace, '.keel/loop/tests/state.json'), 'utf8')) as { status: string; reasons: string[] };
    expect(state.status).toBe('stalled');
    expect(state.reasons.join(' ')).toContain('the progress file did not change for 3 iterations');

    // The person stepped in; the loop goes on from its saved state with iteration 4.
    server.enqueue(writeProgress('# Progress\nDONE\n'), say('Done now.'));
    const resumed = await loop('--resume', 'tests');
    expect((await resumed.exit).code, resumed.stderr()).toBe(0);
    expect(JSON.stringify(bodyOf(3))).toContain('iteration 4 of at most 50');
    expect(ofType(resumed.events, 'loop').at(-1)).toMatchObject({ state: 'complete', iteration: 4 });

    // Its name is taken now.
    const again = await loop('another goal', '--name', 'tests');
    expect((await again.exit).code).toBe(2);
    expect(again.stderr()).toContain('a loop named "tests" already exists; continue it with: keel loop --resume tests');
  });

  it('runs out of iterations without the goal: stopped, not complete (exit 5, state.json and the last event say so)', async () => {
    server.enqueue(writeProgress('# Progress\n- step one\n'), say('One step.'), writeProgress('# Progress\n- step one\n- step two\n'), say('Two steps.'));
    const r = await loop('an endless goal', '--name', 'tests', '--max-iterations', '2');
    expect((await r.exit).code, r.stderr()).toBe(5);
    expect(server.requests).toHaveLength(4);
    expect(ofType(r.events, 'loop').filter((e) => e.state === 'judged').map((e) => e.verdict)).toEqual(['continue', 'stopped']);
    expect(ofType(r.events, 'loop').at(-1)).toMatchObject({ state: 'stopped', iteration: 2 });
    expect(ofType(r.events, 'loop').some((e) => e.state === 'complete')).toBe(false);
    expect(r.stderr()).toContain('"tests" stopped: iteration limit reached after 2 iterations; the goal is not reached');
    expect(r.stderr()).not.toContain('complete');
    const state = JSON.parse(readFileSync(join(workspace, '.keel/loop/tests/state.json'), 'utf8')) as { status: string; reasons: string[] };
    expect(state.status).toBe('stopped');
    expect(state.reasons.join(' ')).toContain('stopped: iteration limit reached');
    // An ended loop is not continued.
    const again = await loop('--resume', 'tests');
    expect((await again.exit).code, again.stderr()).toBe(5);
    expect(server.requests).toHaveLength(4);
  });

  it('refuses bad usage with one line: no goal, a bad iteration count, an unknown loop, a bad name', async () => {
    for (const [args, message] of [
      [[], 'no goal given'],
      [['x', '--max-iterations', '0'], '--max-iterations must be an integer'],
      [['--resume', 'nope'], 'no loop named "nope"'],
      [['x', '--name', '../escape'], 'is not a loop name'],
    ] as const) {
      const r = await loop(...args);
      expect((await r.exit).code).toBe(2);
      expect(r.stderr()).toContain(message);
    }
    expect(server.requests).toHaveLength(0);
  });
});
