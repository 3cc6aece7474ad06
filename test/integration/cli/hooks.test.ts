import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Hooks in `keel run` as a person uses them: real shell scripts configured in the settings files,
 * the built CLI as a child process, the real Anthropic provider against the fake model server.
 * What the model sees is read from the requests the server received.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-hooks-cli-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-hooks-cli-home-'));
});
afterEach(async () => {
  await server.close();
});

/** Hooks in the person's own ~/.keel/settings.json (HOME is the storage folder in these runs): trusted. */
function userSettings(settings: Record<string, unknown>): void {
  mkdirSync(join(storage, '.keel'), { recursive: true });
  writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify(settings));
}

function projectFile(path: string, settings: Record<string, unknown>): void {
  mkdirSync(join(workspace, path, '..'), { recursive: true });
  writeFileSync(join(workspace, path), JSON.stringify(settings));
}

function script(name: string, body: string): string {
  const p = join(storage, name);
  writeFileSync(p, `#!/bin/bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const bash = (id: string, command: string) => ({ blocks: [{ type: 'tool_use' as const, id, name: 'Bash', input: { command } }] });
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });
const sentToModel = (i: number) => JSON.stringify((server.requests[i]!.body as { messages: unknown[] }).messages);
const systemOf = (i: number) => JSON.stringify((server.requests[i]!.body as { system?: unknown }).system ?? '');

describe('keel run with hooks', () => {
  it.each([
    ['in the CLI process', '0'],
    ['on a worker', '1'],
  ])('a hook that fails is reported once on stderr, %s (issue 26 item 11)', async (_where, workers) => {
    userSettings({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo something broke >&2; exit 1' }] }] } });
    server.enqueue(say('Hello.'));
    const r = await run('hi', '--no-memory', '--workers', workers);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr().match(/UserPromptSubmit hook "echo something broke >&2; exit 1" error: Failed with non-blocking status code 1: something broke/g)).toHaveLength(1);
  });

  it('a PreToolUse hook blocks an rm (exit 2): the file stays and the model reads the hook\'s reason', async () => {
    writeFileSync(join(workspace, 'precious.txt'), 'keep me\n');
    const guard = script(
      'no-rm.sh',
      `input=$(cat)
cmd=$(printf '%s' "$input" | jq -r '.tool_input.command')
if [[ "$cmd" == rm* ]]; then echo "rm is not allowed here; move files to ./trash instead" >&2; exit 2; fi
exit 0`,
    );
    userSettings({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: guard }] }] } });
    server.enqueue(bash('toolu_rm', 'rm precious.txt'), say('Understood, I will not delete it.'));
    const r = await run('clean up', '--mode', 'bypassPermissions');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'precious.txt'))).toBe(true);
    expect(ofType(r.events, 'permission')).toEqual([expect.objectContaining({ tool: 'Bash', decision: 'deny' })]);
    expect(ofType(r.events, 'tool_result')).toEqual([expect.objectContaining({ id: 'toolu_rm', is_error: true })]);
    expect(sentToModel(1)).toContain('rm is not allowed here; move files to ./trash instead');
  });

  it('a hook\'s "allow" does not override a deny rule; its "deny" wins over an allow rule', async () => {
    projectFile('.keel/settings.json', { permissions: { deny: ['Bash(rm:*)'], allow: ['Bash(echo:*)'] } });
    const decide = script(
      'decide.sh',
      `cmd=$(jq -r '.tool_input.command')
if [[ "$cmd" == rm* ]]; then echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"looks fine to me"}}'
else echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no echo today"}}'; fi`,
    );
    userSettings({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: decide }] }] } });
    writeFileSync(join(workspace, 'precious.txt'), 'keep me\n');
    server.enqueue(bash('toolu_rm', 'rm precious.txt'), bash('toolu_echo', 'echo hi > out.txt'), say('Both refused.'));
    const r = await run('try both', '--mode', 'bypassPermissions');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'precious.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'out.txt'))).toBe(false);
    expect(ofType(r.events, 'permission').map((e) => [e.tool, e.decision])).toEqual([
      ['Bash', 'deny'],
      ['Bash', 'deny'],
    ]);
    expect(String(ofType(r.events, 'permission')[0]!.reason)).toContain('Bash(rm:*)');
    expect(sentToModel(2)).toContain('no echo today');
  });

  it('a PostToolUse hook adds context the model reads with the result', async () => {
    const note = script('note.sh', `jq -c '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("lint says: 0 problems after " + .tool_name)}}'`);
    userSettings({ hooks: { PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: note }] }] } });
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'a.txt', content: 'hi\n' } }] }, say('Written.'));
    const r = await run('write a.txt', '--mode', 'acceptEdits');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('hi\n');
    expect(sentToModel(1)).toContain('lint says: 0 problems after Write');
  });

  it('a Stop hook sends the agent back to work once, then lets it stop (stop_hook_active)', async () => {
    const log = join(storage, 'stop.log');
    const stop = script(
      'stop.sh',
      `input=$(cat)
printf '%s\\n' "$input" >> ${log}
if [ "$(printf '%s' "$input" | jq -r '.stop_hook_active')" = "false" ]; then echo '{"decision":"block","reason":"Run the tests before you stop."}'; fi`,
    );
    userSettings({ hooks: { Stop: [{ hooks: [{ type: 'command', command: stop }] }] } });
    server.enqueue(say('All done.'), say('Tests ran: all pass.'));
    const r = await run('fix it');
    expect((await r.exit).code, r.stderr()).toBe(0);
    // The answer, the turn the Stop hook asked for, then the gatekeeper's lesson call (docs/memory.md).
    expect(server.requests).toHaveLength(3);
    expect(sentToModel(1)).toContain('Run the tests before you stop.');
    // The lesson call is shown the whole run, up to its last answer.
    expect(sentToModel(2)).toMatch(/The finished task:.*User: fix it.*Agent: All done\..*Run the tests before you stop\..*Agent: Tests ran: all pass\./);
    const inputs = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inputs.map((i) => [i.hook_event_name, i.stop_hook_active, i.last_assistant_message])).toEqual([
      ['Stop', false, 'All done.'],
      ['Stop', true, 'Tests ran: all pass.'],
    ]);
    expect(inputs[0]).toMatchObject({ cwd: workspace, permission_mode: 'default' });
    expect(String(inputs[0]!.transcript_path)).toMatch(/events\.jsonl$/);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('a hook that hangs is killed at its timeout and the task goes on; one that prints 10 MB is capped', async () => {
    const pidFile = join(storage, 'hang.pid');
    const hang = script('hang.sh', `echo $$ > ${pidFile}; sleep 60`);
    const noisy = script('noisy.sh', `head -c 10485760 /dev/zero | tr '\\0' 'x'`);
    userSettings({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hang, timeout: 1 }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `${noisy} >&2; exit 2` }] }],
      },
    });
    server.enqueue(bash('toolu_echo', 'echo still-running'), say('Finished.'));
    const r = await run('echo', '--mode', 'bypassPermissions');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr()).toContain('was stopped at its timeout (1 s)');
    expect(ofType(r.events, 'tool_output').map((e) => e.chunk).join('')).toContain('still-running');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
    // The model got the command's output and a capped piece of the hook's stderr, not 10 MB.
    const body = sentToModel(1);
    expect(body).toContain('still-running');
    expect(body).toContain('more characters cut');
    expect(body.length).toBeLessThan(200_000);
  });

  it('a UserPromptSubmit hook that blocks keeps the prompt from the model; one that adds context reaches it', async () => {
    const gate = script('gate.sh', `if jq -e '.prompt | test("password")' >/dev/null; then echo "prompts must not contain secrets" >&2; exit 2; fi; echo "The team's branch is main."`);
    userSettings({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: gate }] }] } });
    const blocked = await run('my password is hunter2');
    expect((await blocked.exit).code).toBe(1);
    expect(server.requests).toHaveLength(0);
    expect(ofType(blocked.events, 'error')).toEqual([expect.objectContaining({ code: 'blocked_by_hook', message: expect.stringContaining('prompts must not contain secrets') })]);

    server.enqueue(say('On main.'));
    const ok = await run('which branch?');
    expect((await ok.exit).code, ok.stderr()).toBe(0);
    expect(systemOf(0)).toContain("The team's branch is main.");
  });

  it("a workspace's own hooks do not run until approved; --approve-project-hooks approves them", async () => {
    const marker = join(storage, 'ran.txt');
    projectFile('.claude/settings.json', { hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `echo ran >> ${marker}` }] }] } });
    server.enqueue(say('hello'), say('hello again'));
    const first = await run('hi');
    expect((await first.exit).code, first.stderr()).toBe(0);
    expect(existsSync(marker)).toBe(false);
    // Said with how to approve it (docs/permissions.md, "Trust").
    expect(first.stderr()).toMatch(/Keel holds it back until you approve \(review: keel trust show/);
    expect(first.stderr()).toContain(`hook SessionStart: echo ran >> ${marker}`);

    const second = await run('hi', '--approve-project-hooks');
    expect((await second.exit).code, second.stderr()).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
    const list = await runCli(['hooks', 'list', '--workspace', workspace, '--json'], {}, storage);
    expect((await list.exit).code).toBe(0);
    expect(JSON.parse(list.stdout().split('\n')[0]!)).toEqual([expect.objectContaining({ event: 'SessionStart', scope: 'project', state: 'approved' })]);
  });

  it("Claude Code's documented example hooks, copied verbatim into .claude/settings.json, work unchanged", async () => {
    // From https://code.claude.com/docs/en/hooks-guide: log every Bash command, with jq.
    // (HOME is the storage folder here, so ~/.claude is a private folder.)
    mkdirSync(join(storage, '.claude'), { recursive: true });
    projectFile('.claude/settings.json', {
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: "jq -r '\"\\(.tool_input.command) - \\(.tool_input.description // \"No description\")\"' >> ~/.claude/bash-command-log.txt" }] }],
      },
    });
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls -a', description: 'List files' } }] }, say('Listed.'));
    const r = await run('list files', '--mode', 'bypassPermissions', '--approve-project-hooks');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(readFileSync(join(storage, '.claude', 'bash-command-log.txt'), 'utf8')).toBe('ls -a - List files\n');
  });
});

describe('keel run --workers 1 with hooks: the turn runs in a worker process, and so do its hooks', () => {
  it('PreToolUse blocks a Bash command and PostToolUse records the next one, both under the worker, without the key', async () => {
    writeFileSync(join(workspace, 'precious.txt'), 'keep me\n');
    const preLog = join(storage, 'pre.log');
    const postLog = join(storage, 'post.log');
    // Each hook writes down who ran it: its parent process's command line and whether it got the key.
    const whoAmI = (log: string) => `printf 'parent=%s key=%s\\n' "$(tr '\\0' ' ' < /proc/$PPID/cmdline)" "\${ANTHROPIC_API_KEY:-none}" >> ${log}`;
    const guard = script(
      'guard.sh',
      `input=$(cat)
${whoAmI(preLog)}
cmd=$(printf '%s' "$input" | jq -r '.tool_input.command')
if [[ "$cmd" == rm* ]]; then echo "rm is not allowed here; move files to ./trash instead" >&2; exit 2; fi
exit 0`,
    );
    const recorder = script(
      'record.sh',
      `input=$(cat)
${whoAmI(postLog)}
printf '%s\\n' "$input" | jq -c '{hook_event_name, session_id, tool_name, command: .tool_input.command, response: .tool_response.content}' >> ${postLog}
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"recorded by the audit hook"}}'`,
    );
    userSettings({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: guard }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: recorder }] }],
      },
    });
    // A workspace's own hook, not approved: it must not run on the worker either, and the person hears of it.
    const sneaky = join(storage, 'sneaky.txt');
    projectFile('.claude/settings.json', { hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `echo ran >> ${sneaky}` }] }] } });
    server.enqueue(bash('toolu_rm', 'rm precious.txt'), bash('toolu_echo', 'echo hello-from-the-worker'), say('Done.'));
    const r = await run('clean up', '--mode', 'bypassPermissions', '--workers', '1');
    expect((await r.exit).code, r.stderr()).toBe(0);

    // What the model got: the PreToolUse reason for the rm, the echo's output with the PostToolUse context.
    expect(existsSync(join(workspace, 'precious.txt'))).toBe(true);
    expect(ofType(r.events, 'tool_result').map((e) => [e.id, e.is_error ?? false])).toEqual([
      ['toolu_rm', true],
      ['toolu_echo', false],
    ]);
    expect(sentToModel(1)).toContain('rm is not allowed here; move files to ./trash instead');
    expect(sentToModel(2)).toMatch(/hello-from-the-worker.*\[hook\] recorded by the audit hook/);

    // The hooks ran: PreToolUse for both calls, PostToolUse only for the one that ran.
    const pre = readFileSync(preLog, 'utf8').trim().split('\n');
    expect(pre).toHaveLength(2);
    const post = readFileSync(postLog, 'utf8').trim().split('\n');
    expect(post).toHaveLength(2);
    const taskId = ofType(r.events, 'done')[0]!.taskId;
    expect(JSON.parse(post[1]!)).toEqual({ hook_event_name: 'PostToolUse', session_id: taskId, tool_name: 'Bash', command: 'echo hello-from-the-worker', response: 'hello-from-the-worker' });
    // Each hook's parent is the worker process (the lean worker bundle), not the CLI; none got the key.
    for (const line of [...pre, post[0]!]) {
      expect(line).toMatch(/^parent=\S+(?: --[\w-]+(?:=\S+)?)* \S+\/worker\.js --worker-id w1 +key=none$/);
    }
    expect(existsSync(sneaky)).toBe(false);
    expect(r.stderr()).toMatch(/Keel holds it back until you approve/);
    expect(r.stderr()).toContain(`echo ran >> ${sneaky}`);
  });

  it('a PreToolUse "ask" on a worker goes up to the host as a prompt (headless: denied), after the Notification hook ran', async () => {
    const notified = join(storage, 'notified.log');
    userSettings({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"commands are audited"}}'` }] }],
        Notification: [{ hooks: [{ type: 'command', command: `jq -c '{notification_type, message}' >> ${notified}` }] }],
      },
    });
    server.enqueue(bash('toolu_touch', 'touch made.txt'), say('It was refused.'));
    const r = await run('make a file', '--mode', 'bypassPermissions', '--workers', '1');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false);
    // Asked (the hook's reason), then the host's answer: nobody to ask in a headless run.
    expect(ofType(r.events, 'permission')).toEqual([
      expect.objectContaining({ tool: 'Bash', decision: 'ask', reason: expect.stringContaining('commands are audited') }),
      expect.objectContaining({ tool: 'Bash', decision: 'deny' }),
    ]);
    expect(sentToModel(1)).toContain('and a headless run has no one to ask; no mode or allow rule would run it without asking, so only a person can approve it');
    expect(readFileSync(notified, 'utf8').trim()).toBe(JSON.stringify({ notification_type: 'permission_prompt', message: 'Keel needs your permission to use Bash' }));
  });

  it.each([
    ['in the CLI process', '0'],
    ['on a worker', '1'],
  ])('a PostToolUse hook answering "continue": false stops the task %s, with its reason shown', async (_, workers) => {
    const stopper = script('stopper.sh', `cat > /dev/null; echo '{"continue":false,"stopReason":"the build is broken","systemMessage":"see build.log"}'`);
    userSettings({ hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: stopper }] }] } });
    server.enqueue(bash('toolu_echo', 'echo built'), say('This answer is never asked for.'));
    const r = await run('build it', '--mode', 'bypassPermissions', '--workers', workers);
    await r.exit;
    // The command ran; the task stopped right after it (as in process: the result is not recorded).
    expect(ofType(r.events, 'tool_output').map((e) => e.chunk).join('')).toContain('built');
    expect(ofType(r.events, 'tool_result')).toEqual([]);
    // The model is not asked again: the task stopped where the hook said so.
    expect(server.requests).toHaveLength(1);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    expect(r.stderr()).toContain('the build is broken');
    expect(r.stderr()).toContain('PostToolUse hook: see build.log');
  });
});
