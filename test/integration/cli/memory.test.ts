import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Project memory as a person meets it through `keel run`: the built CLI as a child process, the
 * real Anthropic provider, the fake model server. Run 1 teaches a fact (the scripted lesson call),
 * run 2's request carries it; a lesson holding a secret is never written anywhere.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const AWS_KEY = 'AKIAQ4NXT7EXAMPLEKQZ';
const run = (prompt: string, env: Record<string, string> = {}, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra], { ...KEY, ...env }, storage);
const systemOf = (i: number) => JSON.stringify((server.requests[i]!.body as { system?: unknown }).system ?? '');
const lessonTurn = (lesson: object | string) => ({ blocks: [{ type: 'text' as const, text: typeof lesson === 'string' ? lesson : JSON.stringify(lesson) }] });
const memoryFiles = () => {
  try {
    return readdirSync(join(workspace, '.keel', 'memory')).sort();
  } catch {
    return [];
  }
};

/** The person approves what the workspace provides (its instructions files, committed memories: keel trust). */
async function approveWorkspace(): Promise<void> {
  const r = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
  expect((await r.exit).code, r.stderr()).toBe(0);
}

/** `keel memory …` (it takes no --storage, so not through runCli). */
async function memoryCli(...args: string[]) {
  const r = spawnSync(process.execPath, [await cliBundle(), 'memory', ...args, '--workspace', workspace], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: storage } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file under `dir`, with its text. */
function allText(dir: string): string {
  let out = '';
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out += allText(p);
    else if (statSync(p).size < 5_000_000) out += readFileSync(p, 'utf8');
  }
  return out;
}

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-memory-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-cli-memory-store-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run: instructions files and project memory', () => {
  it('a lesson from run 1 is in run 2\'s request; a secret lesson is never stored', async () => {
    // Run 1 answers, then the gatekeeper's lesson call proposes a fact.
    server.enqueue(
      { blocks: [{ type: 'text', text: 'Run `npm run test:unit`; the e2e suite needs `npm run package` first.' }] },
      lessonTurn({ title: 'Unit tests run with vitest', body: 'Run `npm run test:unit` for the unit tests; the e2e suite needs `npm run package` first.', tags: ['testing'] }),
    );
    const first = await run('how do I run the unit tests here?');
    expect((await first.exit).code, first.stderr()).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect(memoryFiles()).toEqual(['unit-tests-run-with-vitest.md']);
    expect(ofType(first.events, 'gatekeeper')).toEqual([expect.objectContaining({ decision: 'saved', file: 'unit-tests-run-with-vitest.md' })]);
    // The run's phases, in order, are recorded and printed.
    const phases = ofType(first.events, 'phase').map((e) => e.phase);
    expect(phases).toEqual(['initializing', 'memorySearch', 'runnerStarting', 'runnerRunning', 'gatekeeperEvaluating', 'memoryPersisting', 'completed']);

    // Run 2: the memory is found for a related prompt and sent to the model with its file name.
    server.enqueue({ blocks: [{ type: 'text', text: 'Added.' }] }, lessonTurn('NONE'));
    const second = await run('add a unit test for the parser and run the unit tests');
    expect((await second.exit).code, second.stderr()).toBe(0);
    expect(systemOf(2)).toContain('Unit tests run with vitest');
    expect(systemOf(2)).toContain('.keel/memory/unit-tests-run-with-vitest.md');
    expect(ofType(second.events, 'memory')).toEqual([expect.objectContaining({ hits: [expect.objectContaining({ file: 'unit-tests-run-with-vitest.md' })] })]);
    expect(ofType(second.events, 'gatekeeper')).toEqual([expect.objectContaining({ decision: 'skipped', rule: 'lesson-found' })]);
    expect(memoryFiles()).toEqual(['unit-tests-run-with-vitest.md']);

    // Run 3: the lesson call proposes a fact with an AWS key in it: rejected, written nowhere.
    server.enqueue({ blocks: [{ type: 'text', text: 'Deployed.' }] }, lessonTurn({ title: 'Deploys use the CI user', body: `Deploy with the access key ${AWS_KEY} of the CI user.`, tags: ['deploy'] }));
    const third = await run('deploy the staging build');
    expect((await third.exit).code, third.stderr()).toBe(0);
    expect(ofType(third.events, 'gatekeeper')).toEqual([expect.objectContaining({ decision: 'rejected', rule: 'secret' })]);
    expect(third.stderr() + third.stdout()).not.toContain(AWS_KEY);
    expect(memoryFiles()).toEqual(['unit-tests-run-with-vitest.md']);
    expect(allText(workspace)).not.toContain(AWS_KEY);
    expect(allText(storage)).not.toContain(AWS_KEY);

    // `keel tasks show` shows the memory used and the phases with their durations.
    const show = await runCli(['tasks', 'show', String(second.events[0]!.taskId)], {}, storage);
    expect((await show.exit).code, show.stderr()).toBe(0);
    expect(show.stdout()).toContain('used 1 memory: unit-tests-run-with-vitest.md');
    expect(show.stdout()).toMatch(/phases \(run 1\): initializing \d+ ms · memorySearch \d+ ms · runnerStarting \d+ ms · runnerRunning \d+ ms · gatekeeperEvaluating \d+ ms → completed/);

    // The memory CLI lists, searches and deletes it.
    const list = await memoryCli('list', '--json');
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ file: 'unit-tests-run-with-vitest.md', title: 'Unit tests run with vitest', tags: ['testing'], source: first.events[0]!.taskId })]);
    expect((await memoryCli('search', 'run the unit tests')).stdout).toContain('unit-tests-run-with-vitest.md');
    expect((await memoryCli('show', 'unit-tests-run-with-vitest.md')).stdout).toContain('npm run package');
    expect((await memoryCli('delete', 'unit-tests-run-with-vitest.md')).code).toBe(0);
    expect(memoryFiles()).toEqual([]);
    const outside = await memoryCli('delete', '../../etc/passwd');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('is not a memory file name');
  }, 120_000);

  it('--no-memory and KEEL_MEMORY=off: no memory in the request and no lesson call', async () => {
    mkdirSync(join(workspace, '.keel', 'memory'), { recursive: true });
    writeFileSync(join(workspace, '.keel', 'memory', 'build.md'), '---\ntitle: The build uses esbuild\ntags: [build]\n---\nnpm run build bundles with esbuild into dist/.\n');
    await approveWorkspace();
    for (const [env, flags] of [[{}, ['--no-memory']], [{ KEEL_MEMORY: 'off' }, []]] as const) {
      const before = server.requests.length;
      server.enqueue({ blocks: [{ type: 'text', text: 'Built.' }] });
      const r = await run('how does the build work? esbuild?', env, ...flags);
      expect((await r.exit).code, r.stderr()).toBe(0);
      expect(server.requests.length - before).toBe(1);
      expect(systemOf(before)).not.toContain('The build uses esbuild');
      expect(ofType(r.events, 'gatekeeper')).toEqual([expect.objectContaining({ decision: 'skipped', rule: 'memory-enabled' })]);
    }
    // With memory on, the same prompt gets it.
    server.enqueue({ blocks: [{ type: 'text', text: 'Built.' }] }, lessonTurn('NONE'));
    const on = await run('how does the build work? esbuild?');
    expect((await on.exit).code, on.stderr()).toBe(0);
    expect(systemOf(server.requests.length - 2)).toContain('The build uses esbuild');
  }, 120_000);

  it('CLAUDE.md, AGENTS.md and KEEL.md are in the system prompt; imports outside the workspace are not read', async () => {
    writeFileSync(join(workspace, 'CLAUDE.md'), 'Indent with tabs.\n@docs/style.md\n@/etc/passwd\n@../../../../etc/hostname\n');
    mkdirSync(join(workspace, 'docs'));
    writeFileSync(join(workspace, 'docs', 'style.md'), 'Name tests after the behaviour.\n');
    writeFileSync(join(workspace, 'AGENTS.md'), 'Run npm test before you finish.\n');
    writeFileSync(join(workspace, 'KEEL.md'), 'Answer in English.\n');
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'KEEL.md'), 'The person prefers short answers.\n'); // HOME is the storage folder in runCli
    await approveWorkspace();
    server.enqueue({ blocks: [{ type: 'text', text: 'Hello.' }] });
    const r = await run('hi', {}, '--no-memory');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const system = systemOf(0);
    for (const text of ['Indent with tabs.', 'Name tests after the behaviour.', 'Run npm test before you finish.', 'Answer in English.', 'The person prefers short answers.']) expect(system).toContain(text);
    expect(system).not.toContain('root:x:0');
    expect(ofType(r.events, 'instructions')).toEqual([expect.objectContaining({ files: ['~/.keel/KEEL.md', 'AGENTS.md', 'CLAUDE.md', 'docs/style.md', 'KEEL.md'] })]);
    expect(r.stderr()).toMatch(/\/etc\/passwd: not read, it is outside/);
  }, 120_000);

  it('the lesson call\'s tokens and cost count in the task\'s usage and cost (stream-json, keel tasks list)', async () => {
    // Priced model (3 $ / 15 $ per million): the turn costs 1000·3 + 100·15, the lesson call 2000·3 + 50·15 (µ$).
    server.enqueue(
      { blocks: [{ type: 'text', text: 'The build uses esbuild.' }], usage: { input_tokens: 1000, output_tokens: 100 } },
      { ...lessonTurn({ title: 'The build uses esbuild', body: 'scripts/build.mjs bundles the extension with esbuild.', tags: ['build'] }), usage: { input_tokens: 2000, output_tokens: 50 } },
    );
    const r = await runCli(
      ['run', 'what bundles the extension?', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-sonnet-4-test', '--workspace', workspace, '--output-format', 'stream-json'],
      KEY,
      storage,
    );
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(server.requests).toHaveLength(2);
    const usage = ofType(r.events, 'usage');
    expect(usage.map((u) => [u.inputTokens, u.outputTokens])).toEqual([
      [1000, 100],
      [2000, 50],
    ]);
    expect(usage.at(-1)!.costUsd as number).toBeCloseTo(0.00675, 8);
    expect(usage.at(-1)!.totalCostUsd as number).toBeCloseTo(0.0045 + 0.00675, 8);
    const list = await runCli(['tasks', 'list', '--json'], {}, storage);
    expect((await list.exit).code, list.stderr()).toBe(0);
    const [task] = JSON.parse(list.stdout()) as { tokens: number; cost: number }[];
    expect(task!.tokens).toBe(1000 + 100 + 2000 + 50);
    expect(task!.cost).toBeCloseTo(0.01125, 8);
  }, 120_000);
});
