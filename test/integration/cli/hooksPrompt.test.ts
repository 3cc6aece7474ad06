import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
import { cliBundle, runCli } from './cliHarness';

/**
 * Claude Code's `"type": "prompt"` hooks through `keel run` (docs/hooks.md, "Prompt hooks"): a
 * model answers for the hook with `{"ok": …}`. A PreToolUse prompt hook denies a Bash call (the
 * file stays, the model reads the reason); a Stop prompt hook sends the agent back once with its
 * reason, then lets it stop. The hook's calls go to the task's provider with the fast model and
 * are charged to the task — in process and on a worker.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
/** The judge's requests carry the hook system prompt; the agent's carry tool definitions. */
const JUDGE = 'You are a hook of a coding agent';
const agent = (t: FakeTurn): FakeTurn => ({ ...t, when: '"input_schema"' });
const judge = (answer: string): FakeTurn => ({ blocks: [{ type: 'text', text: answer }], when: JUDGE, usage: { input_tokens: 400, output_tokens: 20 } });

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-hooks-prompt-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-hooks-prompt-home-'));
});
afterEach(async () => {
  await server.close();
});

function bodyText(i: number): string {
  return JSON.stringify(server.requests[i]!.body);
}

describe('prompt hooks in keel run', () => {
  it.each([['1'], ['0']])('a PreToolUse prompt hook denies rm; a Stop prompt hook sends the agent back once (workers %s)', async (workers) => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(
      join(storage, '.keel', 'settings.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'Refuse any command that deletes files. The call: $ARGUMENTS' }] }],
          Stop: [{ hooks: [{ type: 'prompt', prompt: 'The agent must end with the word DONE. $ARGUMENTS', timeout: 30 }] }],
        },
      }),
    );
    mkdirSync(join(workspace, 'build'));
    server.enqueue(
      agent({ blocks: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'rm -rf build' } }] }),
      judge('{"ok": false, "reason": "Deleting files is not allowed in this project."}'),
      agent({ blocks: [{ type: 'text', text: 'I could not delete build.' }] }),
      judge('{"ok": false, "reason": "End your answer with DONE."}'),
      agent({ blocks: [{ type: 'text', text: 'The folder stays. DONE' }] }),
      judge('{"ok": true}'),
    );
    const r = await runCli(
      ['run', 'clean up', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', '--mode', 'bypassPermissions', '--workers', workers],
      KEY,
      storage,
    );
    expect((await r.exit).code, r.stderr()).toBe(0);
    // The hook denied the call: nothing was deleted, and the model read the judge's reason.
    expect(existsSync(join(workspace, 'build'))).toBe(true);
    expect(server.requests).toHaveLength(6);
    const judged = server.requests.map((q, i) => (JSON.stringify(q.body).includes(JUDGE) ? i : -1)).filter((i) => i >= 0);
    expect(judged).toEqual([1, 3, 5]);
    // The judge got the event in place of $ARGUMENTS, on the fast model.
    expect(bodyText(1)).toContain('Refuse any command that deletes files. The call: {\\"session_id\\"');
    expect(bodyText(1)).toContain('rm -rf build');
    expect((server.requests[1]!.body as { model: string }).model).toMatch(/haiku/);
    expect(bodyText(2)).toContain('Deleting files is not allowed in this project.');
    // Not ok on Stop: the agent went back to work with the reason; ok the second time let it stop.
    expect(bodyText(3)).toContain('I could not delete build.');
    expect(bodyText(4)).toContain('End your answer with DONE.');
    expect(bodyText(5)).toContain('\\"stop_hook_active\\":true');
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    // Each judgement is a priced request of the task: the task's cost counts them (the agent's model has no price).
    const usage = r.events.filter((e) => e.type === 'usage') as { costUsd: number; totalCostUsd: number }[];
    expect(usage.filter((u) => u.costUsd > 0)).toHaveLength(3);
    expect(usage.at(-1)!.totalCostUsd).toBeCloseTo(usage.reduce((s, u) => s + u.costUsd, 0), 10);
  });

  it("a workspace's prompt hook is held until approved, shown in full in the approval, and a changed prompt is held again", async () => {
    const settings = join(workspace, '.claude', 'settings.json');
    mkdirSync(join(workspace, '.claude'), { recursive: true });
    const write = (prompt: string) => writeFileSync(settings, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'prompt', prompt }] }] } }));
    write('Keep going until the tests pass. $ARGUMENTS');
    const run = () =>
      runCli(['run', 'hi', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', '--workers', '0'], KEY, storage);

    // Not approved: it never asks the model (only the agent's request is sent).
    server.enqueue(agent({ blocks: [{ type: 'text', text: 'Hello.' }] }));
    const held = await run();
    expect((await held.exit).code, held.stderr()).toBe(0);
    expect(server.requests).toHaveLength(1);

    const show = await runCli(['trust', 'show', '--workspace', workspace], {}, storage);
    expect((await show.exit).code, show.stderr()).toBe(0);
    expect(show.stdout()).toContain('Keep going until the tests pass. $ARGUMENTS');
    expect(show.stdout()).toContain('priced request');
    const approve = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
    expect((await approve.exit).code, approve.stderr()).toBe(0);

    // Approved: it judges the stop.
    server.enqueue(agent({ blocks: [{ type: 'text', text: 'Hello again.' }] }), judge('{"ok": true}'));
    const ran = await run();
    expect((await ran.exit).code, ran.stderr()).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect(bodyText(2)).toContain('Keep going until the tests pass.');

    // A changed prompt is a new hook: held again, and listed as needing approval.
    write('Never stop. $ARGUMENTS');
    server.enqueue(agent({ blocks: [{ type: 'text', text: 'Bye.' }] }));
    const changed = await run();
    expect((await changed.exit).code, changed.stderr()).toBe(0);
    expect(server.requests).toHaveLength(4);
    const list = await runCli(['hooks', 'list', '--workspace', workspace], {}, storage);
    expect((await list.exit).code, list.stderr()).toBe(0);
    expect(list.stdout()).toMatch(/needs approval +Stop: prompt "Never stop\. \$ARGUMENTS"/);
  });

  it('a judgement the budget has no room for is not sent: the hook fails visibly and the task goes on', async () => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'prompt', prompt: 'Done? $ARGUMENTS' }] }] } }));
    // The agent's model has no price (it costs nothing); the judge's fast model does, and the cap leaves no room for it.
    server.enqueue(agent({ blocks: [{ type: 'text', text: 'Hello.' }] }), judge('{"ok": false, "reason": "never seen"}'));
    const r = await runCli(
      ['run', 'hi', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', '--workers', '0', '--max-budget-usd', '0.0001'],
      KEY,
      storage,
    );
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(r.stderr()).toMatch(/Stop prompt hook "Done\? \$ARGUMENTS" error: Failed with non-blocking status code 1: not asked: the task has spent \$0\.00 of its \$0\.0001 budget and this call could cost up to \$0\.\d+/);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });
});
