import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { HookRunner } from '../../../src/core/hooks/runner';
import type { HookInput } from '../../../src/core/hooks/types';
import { SecretKeeper } from '../../../src/core/security/secretKeeper';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';
import { isAlive } from '../tools/helpers';

/**
 * The hook runner with real shell scripts and real processes: what a command receives (stdin in
 * Claude Code's field names, CLAUDE_PROJECT_DIR, no provider keys), exit-code and JSON-output
 * semantics, timeouts that kill the process group, capped output, parallel runs, approvals.
 */
let workspace: string;
let home: string;
let keelHome: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'keel-hooks-ws-'));
  home = mkdtempSync(join(tmpdir(), 'keel-hooks-home-'));
  keelHome = join(home, '.keel');
  mkdirSync(keelHome, { recursive: true });
});

function userHooks(hooks: Record<string, unknown>): void {
  writeFileSync(join(keelHome, 'settings.json'), JSON.stringify({ hooks }));
}

function script(name: string, body: string): string {
  const p = join(workspace, name);
  writeFileSync(p, `#!/bin/bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

function trustOf(): WorkspaceTrust {
  return new WorkspaceTrust({ workspace, keelHome, home });
}

function runner(env: NodeJS.ProcessEnv = process.env, extra: Partial<ConstructorParameters<typeof HookRunner>[0]> = {}): HookRunner {
  const secrets = SecretKeeper.fromEnvironment(env);
  return new HookRunner({ workspace, trust: trustOf(), home, environment: () => secrets.environment(env), killGraceMs: 200, ...extra });
}

const pre = (command: string): HookInput => ({
  hook_event_name: 'PreToolUse',
  session_id: 'task-1',
  transcript_path: '',
  cwd: workspace,
  permission_mode: 'default',
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: 'toolu_1',
});

describe('HookRunner with real commands', () => {
  it('gives the command the event on stdin with Claude Code field names, the project dir, and no provider key', async () => {
    const out = join(workspace, 'seen.json');
    script('dump.sh', `cat > "${out}"; env > "${out}.env"`);
    userHooks({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/dump.sh' }] }] });
    const outcome = await runner({ ...process.env, ANTHROPIC_API_KEY: 'sk-ant-secret-value-123456' }).fire(pre('ls -la'));
    expect(outcome.errors).toEqual([]);
    const seen = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(seen).toMatchObject({ hook_event_name: 'PreToolUse', session_id: 'task-1', cwd: workspace, tool_name: 'Bash', tool_input: { command: 'ls -la' }, tool_use_id: 'toolu_1' });
    const env = readFileSync(`${out}.env`, 'utf8');
    expect(env).toContain(`CLAUDE_PROJECT_DIR=${workspace}`);
    expect(env).toContain(`KEEL_PROJECT_DIR=${workspace}`);
    expect(env).not.toContain('sk-ant-secret-value-123456');
    expect(env).not.toContain('ANTHROPIC_API_KEY');
  });

  it('exit 2 denies a PreToolUse with stderr as the reason; other codes are visible non-blocking errors', async () => {
    script('deny-rm.sh', `cmd=$(jq -r .tool_input.command); if [[ "$cmd" == rm* ]]; then echo "Blocked: rm is not allowed here" >&2; exit 2; fi; exit 0`);
    script('broken.sh', 'echo "something broke" >&2; exit 1');
    userHooks({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './deny-rm.sh' }, { type: 'command', command: './broken.sh' }] }] });
    const r = runner();
    const denied = await r.fire(pre('rm -rf build'));
    expect(denied.permission).toEqual({ decision: 'deny', reason: 'Blocked: rm is not allowed here' });
    expect(denied.errors).toEqual([expect.stringContaining('Failed with non-blocking status code 1: something broke')]);
    const fine = await r.fire(pre('ls'));
    expect(fine.permission).toBeUndefined();
    expect(fine.block).toBeUndefined();
  });

  it('honours JSON output: permissionDecision (most restrictive wins), additionalContext, continue:false, systemMessage', async () => {
    userHooks({
      PreToolUse: [
        {
          matcher: 'Bash|Edit',
          hooks: [
            { type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"looks fine"}}'` },
            { type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"please check","additionalContext":"prod is frozen"}}'` },
          ],
        },
      ],
      Stop: [{ hooks: [{ type: 'command', command: `echo '{"continue":false,"stopReason":"build failed","systemMessage":"see the log"}'` }] }],
    });
    const r = runner();
    const o = await r.fire(pre('make'));
    expect(o.permission).toEqual({ decision: 'ask', reason: 'please check' });
    expect(o.additionalContext).toEqual(['prod is frozen']);
    const stop = await r.fire({ hook_event_name: 'Stop', session_id: 't', transcript_path: '', cwd: workspace, stop_hook_active: false, last_assistant_message: 'done' });
    expect(stop.stop).toEqual({ reason: 'build failed' });
    expect(stop.systemMessages).toEqual(['see the log']);
  });

  it('plain stdout of UserPromptSubmit is context; decision block blocks the prompt', async () => {
    userHooks({ UserPromptSubmit: [{ hooks: [{ type: 'command', command: `p=$(jq -r .prompt); if [[ "$p" == *secret* ]]; then echo '{"decision":"block","reason":"no secrets"}'; else echo "Today is a test day."; fi` }] }] });
    const r = runner();
    const ok = await r.fire({ hook_event_name: 'UserPromptSubmit', session_id: 't', transcript_path: '', cwd: workspace, prompt: 'hello' });
    expect(ok.additionalContext).toEqual(['Today is a test day.']);
    const blocked = await r.fire({ hook_event_name: 'UserPromptSubmit', session_id: 't', transcript_path: '', cwd: workspace, prompt: 'my secret' });
    expect(blocked.block).toEqual({ reason: 'no secrets' });
  });

  it('kills a hanging hook and its children at the timeout, and goes on', async () => {
    const pidFile = join(workspace, 'child.pid');
    // 3 s: on a loaded machine the shell may need a while to start `sleep` and write its pid.
    userHooks({ PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: `sleep 300 & echo $! > "${pidFile}"; wait`, timeout: 3 }] }] });
    const o = await runner().fire(pre('ls'));
    expect(o.errors).toEqual([expect.stringContaining('stopped at its timeout')]);
    expect(o.runs[0]).toMatchObject({ timedOut: true, exitCode: null });
    expect(o.permission).toBeUndefined();
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    expect(isAlive(child)).toBe(false);
  });

  it('a hook printing 10 MB costs little and its output is capped', async () => {
    userHooks({ PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'head -c 10485760 /dev/zero | tr "\\0" "x"; echo "done" >&2; exit 2' }] }] });
    const o = await runner().fire({ hook_event_name: 'PostToolUse', session_id: 't', transcript_path: '', cwd: workspace, tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: 'x', tool_use_id: 'a' });
    expect(o.runs[0]).toMatchObject({ exitCode: 2, truncated: true });
    expect(o.additionalContext).toEqual(['done']);
  });

  it('runs the matching hooks of one event in parallel', async () => {
    // Each hook waits (up to 10 s) until all three have started: run one after another, the first
    // would see only itself.
    const wait = 'for i in $(seq 100); do [ "$(grep -c start order.log)" -ge 3 ] && break; sleep 0.1; done';
    const hooks = [1, 2, 3].map((i) => ({ type: 'command', command: `echo start${i} >> order.log; ${wait}; echo "end${i} saw $(grep -c start order.log)" >> order.log`, timeout: 30 }));
    userHooks({ PreToolUse: [{ matcher: 'Bash', hooks }] });
    await runner().fire(pre('ls'));
    const ends = readFileSync(join(workspace, 'order.log'), 'utf8').trim().split('\n').filter((l) => l.startsWith('end'));
    expect(ends.map((l) => l.replace(/^end\d /, '')).sort()).toEqual(['saw 3', 'saw 3', 'saw 3']);
  });

  it('does not run workspace hooks until approved, asks again when one changes, and always runs user hooks', async () => {
    mkdirSync(join(workspace, '.claude'));
    const projectFile = join(workspace, '.claude', 'settings.json');
    const write = (cmd: string) => writeFileSync(projectFile, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: cmd }] }] } }));
    write('echo project >> ran.log');
    userHooks({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo user >> ran.log' }] }] });
    const unapproved: string[] = [];
    const trust = trustOf();
    const r = runner(process.env, { trust, onUnapproved: (hs) => unapproved.push(...hs.map((h) => h.command)) });
    await r.fire(pre('ls'));
    expect(readFileSync(join(workspace, 'ran.log'), 'utf8')).toBe('user\n');
    expect(unapproved).toEqual(['echo project >> ran.log']);
    await trust.approve();
    await r.fire(pre('ls'));
    expect(readFileSync(join(workspace, 'ran.log'), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['project', 'user', 'user']);
    // A changed hook is a new hook: not approved until the person says so again.
    write('echo changed >> ran.log');
    await r.fire(pre('ls'));
    expect(readFileSync(join(workspace, 'ran.log'), 'utf8')).not.toContain('changed');
    expect(unapproved).toEqual(['echo project >> ran.log', 'echo changed >> ran.log']);
    expect(trust.status().pending.map((i) => i.summary)).toEqual(['hook PreToolUse [Bash]: echo changed >> ran.log']);
    // The approvals live outside the repository, readable by the person only.
    expect(readFileSync(join(keelHome, 'trust', 'approvals.json'), 'utf8')).toContain('echo project >> ran.log');
  });

  it('announces every event to observers, also when no hook is configured', async () => {
    const seen: string[] = [];
    const r = runner();
    r.observe({ event: (i) => seen.push(i.hook_event_name) });
    await r.fire(pre('ls'));
    await r.fire({ hook_event_name: 'SessionStart', session_id: 't', transcript_path: '', cwd: workspace, source: 'startup' });
    expect(seen).toEqual(['PreToolUse', 'SessionStart']);
  });
});
