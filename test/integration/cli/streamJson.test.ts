import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * The order of `keel run --output-format stream-json` from real runs, success and failure, and
 * docs/cli.md's examples held to it: each example block is run as written and the type (and
 * state, mode, status or code) of every line it shows must be what the real run printed, in that
 * order (`…` lines stand for any number of lines).
 */
type Line = Record<string, unknown>;

/** What an example shows of a line: its type and the field that says which one it is. */
const signature = (e: Line): string => [e.type, e.state ?? e.mode ?? e.status ?? e.code ?? e.phase ?? (e.type === 'gatekeeper' ? e.decision : '')].join(' ').trim();

interface DocExample {
  args: string[];
  /** Runs of consecutive lines, split where the example elides with `…`. */
  segments: string[][];
  openStart: boolean;
  openEnd: boolean;
}

function docExamples(): DocExample[] {
  const md = readFileSync(resolve(__dirname, '../../../docs/cli.md'), 'utf8');
  const out: DocExample[] = [];
  for (const block of md.split('```').filter((_, i) => i % 2 === 1)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const command = lines[0]?.trim() ?? '';
    if (!command.startsWith('$ keel run') || !command.includes('stream-json')) continue;
    const args = [...command.slice('$ keel '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const body = lines.slice(1).map((l) => l.trim());
    const segments: string[][] = [[]];
    for (const l of body) {
      if (l === '…') segments.push([]);
      else segments.at(-1)!.push(signature(JSON.parse(l) as Line));
    }
    out.push({ args, segments, openStart: body[0] === '…', openEnd: body.at(-1) === '…' });
  }
  return out;
}

/** Whether `real` shows the example's segments in order, anchored at the start and end unless elided. */
function matchesExample(real: string[], ex: DocExample): boolean {
  const segs = ex.segments.filter((s) => s.length > 0);
  let at = 0;
  for (const [i, seg] of segs.entries()) {
    const anchoredStart = i === 0 && !ex.openStart;
    const anchoredEnd = i === segs.length - 1 && !ex.openEnd;
    const fits = (k: number) => seg.every((s, j) => real[k + j] === s);
    let found = -1;
    if (anchoredEnd) found = fits(real.length - seg.length) && real.length - seg.length >= at ? real.length - seg.length : -1;
    else if (anchoredStart) found = fits(0) ? 0 : -1;
    else for (let k = at; k + seg.length <= real.length && found < 0; k++) if (fits(k)) found = k;
    if (found < 0 || (anchoredStart && found !== 0)) return false;
    at = found + seg.length;
  }
  return true;
}

let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (prompt: string, ...extra: string[]) => ['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-ws-'));
});
afterEach(async () => {
  await server.close();
});

describe('stream-json: the order of a run', () => {
  it('a run with a tool round: the prompt first, then initializing; done is the last line', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Listing.' }, { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } }] }, { blocks: [{ type: 'text', text: 'Done.' }] });
    const run = await runCli(args('list the files'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const sig = run.events.map(signature);
    const runStart = ['phase initializing', 'phase memorySearch', 'phase runnerStarting', 'phase runnerRunning'];
    expect(sig.slice(0, 9)).toEqual(['user_message', 'message', 'task initializing', ...runStart, 'task running', 'turn preparing']);
    // The run's phases end after the turn loop (the gatekeeper: its lesson call, counted in the
    // task's usage, finds no lesson here), then `done`.
    expect(sig.slice(-7)).toEqual(['turn done', 'task completed', 'phase gatekeeperEvaluating', 'usage', 'gatekeeper skipped', 'phase completed', 'done completed']);
    expect(sig.filter((s) => s.startsWith('done'))).toHaveLength(1);
    // The tool round in between, in the order the turn machine runs it: the call is shown as its
    // input is validated, then the permission machine decides it; the run's phases follow the tools.
    const round = ['tool_call', 'phase processingToolEvents', 'turn permissionCheck', 'permission', 'turn executingTool', 'tool_result', 'phase runnerRunning', 'turn assembling', 'message'];
    const start = sig.indexOf('tool_call');
    expect(sig.slice(start, start + round.length + 20).filter((s) => !s.startsWith('tool_output')).slice(0, round.length)).toEqual(round);
  });

  it('a run that fails mid-turn: awaitingUser, error, then done (failed) as the last line; exit 1', async () => {
    const guarded = await startFakeModelServer({ requireApiKey: 'sk-right' });
    try {
      const run = await runCli(['run', 'hi', '--provider', 'anthropic', '--base-url', guarded.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json'], { ANTHROPIC_API_KEY: 'sk-wrong' });
      expect((await run.exit).code).toBe(1);
      const sig = run.events.map(signature);
      expect(sig.slice(0, 8)).toEqual(['user_message', 'message', 'task initializing', 'phase initializing', 'phase memorySearch', 'phase runnerStarting', 'phase runnerRunning', 'task running']);
      expect(sig.slice(-4)).toEqual(['task awaitingUser', 'error auth_failed', 'phase failed', 'done failed']);
      expect(sig.filter((s) => s.startsWith('done'))).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });

  it('a run that cannot start (no key): done (failed) is the last line; exit 1', async () => {
    const run = await runCli(args('hi'), {});
    expect((await run.exit).code).toBe(1);
    expect(run.events.map(signature)).toEqual(['user_message', 'message', 'task initializing', 'phase initializing', 'phase failed', 'task awaitingUser', 'error no_api_key', 'done failed']);
    expect(server.requests).toHaveLength(0);
  });
});

describe('stream-json: the examples in docs/cli.md are what the CLI prints', () => {
  const examples = docExamples();
  it('docs/cli.md has a completing and a failing example', () => {
    expect(examples.map((e) => e.segments.flat().at(-1))).toEqual(['done completed', 'done failed']);
  });
  it.each(examples.map((e) => [e.args.join(' '), e] as const))('keel %s', async (_name, ex) => {
    // As the example says: no key in the environment; the harness adds --storage.
    const run = await runCli([...ex.args, '--workspace', workspace], {});
    await run.exit;
    const real = run.events.map(signature);
    expect(matchesExample(real, ex), `real run:\n${real.join('\n')}\n\nexample:\n${ex.segments.map((s) => s.join('\n')).join('\n…\n')}`).toBe(true);
  });
});

describe('advice after a failure is the CLI’s own', () => {
  it('no key: set ANTHROPIC_API_KEY or use --provider demo; never a VS Code command', async () => {
    const run = await runCli(args('hi'), {});
    await run.exit;
    const message = String(ofType(run.events, 'error')[0]!.message);
    expect(message).toMatch(/^No Anthropic API key is set\. /);
    expect(message).toContain('ANTHROPIC_API_KEY=');
    expect(message).toContain('--provider demo');
    expect(message).toContain('--base-url');
    expect(message).not.toMatch(/Keel:|keel\.\w|Set API Key/);
  });

  it('a rejected key and the text output say the same in CLI terms', async () => {
    const guarded = await startFakeModelServer({ requireApiKey: 'sk-right' });
    try {
      const run = await runCli(['run', 'hi', '--provider', 'anthropic', '--base-url', guarded.url, '--model', 'claude-test', '--workspace', workspace], { ANTHROPIC_API_KEY: 'sk-wrong' });
      expect((await run.exit).code).toBe(1);
      expect(run.stderr()).toMatch(/Error \(auth_failed\): Anthropic rejected the API key \(401\)\. Set ANTHROPIC_API_KEY=… to a key this server accepts/);
      expect(run.stderr()).not.toMatch(/Keel:|Set API Key/);
    } finally {
      await guarded.close();
    }
  });
});
