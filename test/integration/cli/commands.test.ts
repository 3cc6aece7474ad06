import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Claude Code's slash commands in `keel run "/name args"`: the built CLI as a child process, the
 * real Anthropic provider against the fake model server; what the model got is read from the
 * requests the server received. HOME is the storage folder, so `~/.claude/commands` is the
 * person's own (trusted) folder.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', ...extra], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cmd-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-cmd-home-'));
});
afterEach(async () => {
  await server.close();
});

function userCommand(rel: string, text: string): void {
  const p = join(storage, '.claude', 'commands', rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
}
const userText = (i: number) => {
  const messages = (server.requests[i]!.body as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(messages[0]!.content);
};
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

describe('keel run "/command"', () => {
  it.each([['0'], ['1']])('expands $ARGUMENTS and $1 of a command (namespaced by its folder) into the prompt the model gets (workers %s)', async (workers) => {
    userCommand('git/review.md', '---\ndescription: Review a change\nargument-hint: [file] [focus]\n---\nReview $1 with a focus on $2. All: $ARGUMENTS\n');
    server.enqueue(say('Reviewed.'));
    const r = await run('/review src/a.ts "error handling"', '--workers', workers);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(userText(0)).toContain('Review src/a.ts with a focus on error handling. All: src/a.ts \\"error handling\\"');
    expect(ofType(r.events, 'user_message')[0]).toMatchObject({ text: expect.stringContaining('Review src/a.ts') });
    const again = await run('/git:review b.ts', '--workers', workers);
    expect((await again.exit).code, again.stderr()).toBe(0);
    expect(userText(1)).toContain('Review b.ts with a focus on .');
  });

  it.each([['0'], ['1']])('shows the command as typed (text output, stream-json, keel tasks show) while the model gets its expansion (workers %s)', async (workers) => {
    userCommand('review.md', '---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully and list what is wrong.\n');
    const EXPANDED = 'Review src/greet.ts carefully and list what is wrong.';
    server.enqueue(say('greet.ts is fine.'));
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--no-memory', '--workers', workers];
    const text = await runCli(['run', '/review src/greet.ts', ...common], KEY, storage);
    expect((await text.exit).code, text.stderr()).toBe(0);
    // The text output names what ran as the person typed it; stdout stays the answer.
    expect(text.stderr()).toMatch(/^> \/review src\/greet\.ts$/m);
    expect(text.stderr()).not.toContain(EXPANDED);
    expect(text.stdout().trim()).toBe('greet.ts is fine.');
    // The request carries the expansion, never the typed line.
    expect(userText(0)).toContain(EXPANDED);
    expect(userText(0)).not.toContain('/review');

    // stream-json carries both; a plain message has no `typed`.
    server.enqueue(say('fine again.'));
    const json = await run('/review src/greet.ts', '--workers', workers);
    expect((await json.exit).code, json.stderr()).toBe(0);
    expect(ofType(json.events, 'user_message')[0]).toMatchObject({ text: expect.stringContaining(EXPANDED), typed: '/review src/greet.ts' });
    expect(userText(1)).not.toContain('/review');
    server.enqueue(say('hi'));
    const plain = await run('just words', '--workers', workers);
    expect((await plain.exit).code, plain.stderr()).toBe(0);
    expect(ofType(plain.events, 'user_message')[0]).not.toHaveProperty('typed');

    // The history names the task, and shows the message, as typed, with what it sent under it.
    const id = String(ofType(json.events, 'task')[0]!.taskId);
    const list = await runCli(['tasks', 'list'], {}, storage);
    expect((await list.exit).code, list.stderr()).toBe(0);
    expect(list.stdout()).toContain('/review src/greet.ts');
    const show = await runCli(['tasks', 'show', id], {}, storage);
    expect((await show.exit).code, show.stderr()).toBe(0);
    expect(show.stdout()).toContain(`> user\n  /review src/greet.ts\n  which sent:\n    ${EXPANDED}`);
  });

  it("a command's model is its run's model", async () => {
    userCommand('quick.md', '---\nmodel: claude-haiku-4-5\n---\nSay hi');
    server.enqueue(say('hi'));
    const r = await run('/quick');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect((server.requests[0]!.body as { model: string }).model).toBe('claude-haiku-4-5');
  });

  for (const workers of ['0', '1']) {
    it(`allowed-tools narrows even bypassPermissions: a Bash call it does not name is denied (workers ${workers})`, async () => {
      userCommand('look.md', '---\nallowed-tools: Read, Bash(git status)\n---\nLook around');
      server.enqueue(
        { blocks: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'touch made-by-model.txt' } }] },
        { blocks: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'git status' } }] },
        say('done'),
      );
      const r = await run('/look', '--mode', 'bypassPermissions', '--workers', workers);
      expect((await r.exit).code, r.stderr()).toBe(0);
      expect(existsSync(join(workspace, 'made-by-model.txt'))).toBe(false);
      const perms = ofType(r.events, 'permission');
      expect(perms[0]).toMatchObject({ toolCallId: 'toolu_1', decision: 'deny', reason: expect.stringContaining('/look allows only Read, Bash(git status)') });
      expect(perms[1]).toMatchObject({ toolCallId: 'toolu_2', decision: 'allow' });
    });
  }

  it("the narrowing ends with the command's run: a later message may use Bash again", async () => {
    userCommand('look.md', '---\nallowed-tools: Read\n---\nLook');
    server.enqueue(say('looked'));
    const first = await run('/look');
    expect((await first.exit).code, first.stderr()).toBe(0);
    const id = String(ofType(first.events, 'task')[0]!.taskId);
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_3', name: 'Bash', input: { command: 'touch later.txt' } }] }, say('ok'));
    const next = await runCli(['run', '--resume', id, 'now make the file', '--provider', 'anthropic', '--base-url', server.url, '--mode', 'bypassPermissions', '--output-format', 'stream-json'], KEY, storage);
    expect((await next.exit).code, next.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'later.txt'))).toBe(true);
  });

  it("a workspace's own command is held back until approved; nothing is sent", async () => {
    mkdirSync(join(workspace, '.claude', 'commands'), { recursive: true });
    writeFileSync(join(workspace, '.claude', 'commands', 'deploy.md'), 'Run ./deploy.sh to production');
    const r = await run('/deploy');
    expect((await r.exit).code).toBe(2);
    expect(r.stderr()).toMatch(/\/deploy is a command of this workspace \(\.claude\/commands\/deploy\.md\) that you have not approved yet; review it with keel trust show/);
    expect(server.requests).toHaveLength(0);

    // keel trust lists it; once approved, it runs — and a changed file is a new question.
    const show = await runCli(['trust', 'show', '--workspace', workspace], {}, storage);
    expect((await show.exit).code, show.stderr()).toBe(0);
    expect(show.stdout()).toContain('command /deploy');
    const approve = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
    expect((await approve.exit).code, approve.stderr()).toBe(0);
    server.enqueue(say('Deployed.'));
    const next = await run('/deploy');
    expect((await next.exit).code, next.stderr()).toBe(0);
    expect(userText(0)).toContain('Run ./deploy.sh to production');
    writeFileSync(join(workspace, '.claude', 'commands', 'deploy.md'), 'Run ./deploy.sh --force to production');
    const changed = await run('/deploy');
    expect((await changed.exit).code).toBe(2);
    expect(server.requests).toHaveLength(1);
  });

  it('an unknown command is a usage error; /help lists the commands; neither sends a request', async () => {
    userCommand('review.md', '---\ndescription: Review a change\n---\nReview');
    const unknown = await run('/reveiw');
    expect((await unknown.exit).code).toBe(2);
    expect(unknown.stderr()).toMatch(/There is no command \/reveiw/);
    const help = await run('/help');
    expect((await help.exit).code).toBe(0);
    expect(help.stdout()).toMatch(/\/review — Review a change \(user: ~\/\.claude\/commands\/review\.md\)/);
    expect(help.stdout()).toMatch(/\/compact \[instructions\]/);
    expect(server.requests).toHaveLength(0);
  });

  it('a path at the start of a message is text, not a command', async () => {
    server.enqueue(say('ok'));
    const r = await run('/usr/bin/env is missing');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(userText(0)).toContain('/usr/bin/env is missing');
  });
});
