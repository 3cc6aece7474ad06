import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileIf } from '../../../src/core/hooks/ifCondition';
import { hookMatches } from '../../../src/core/hooks/matcher';
import { loadHooksConfig } from '../../../src/core/hooks/config';
import type { ConfiguredHook, HookInput } from '../../../src/core/hooks/types';

/** A hook's `if`: one permission rule the tool call must match (Claude Code's syntax). */
describe("a hook's if condition", () => {
  const holds = (rule: string, tool: string, input: Record<string, unknown>) => {
    const c = compileIf(rule, '/home/me');
    if (!c.ok) throw new Error(c.error);
    return c.test(tool, input, '/ws');
  };

  it('Bash(rm -rf *) holds for rm -rf commands only, in any simple command of a line', () => {
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'rm -rf build' })).toBe(true);
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'ls && rm -rf /tmp/x' })).toBe(true);
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'FOO=1 rm -rf x' })).toBe(true);
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'ls -la' })).toBe(false);
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'rm file.txt' })).toBe(false);
    expect(holds('Bash(git push:*)', 'Bash', { command: 'git status | cat' })).toBe(false);
    expect(holds('Bash(git push:*)', 'Bash', { command: 'git push origin main' })).toBe(true);
    // Another tool never matches a Bash rule.
    expect(holds('Bash(rm -rf *)', 'Read', { file_path: 'rm -rf' })).toBe(false);
  });

  it('fails open where the command cannot be read exactly: the hook runs and decides', () => {
    expect(holds('Bash(rm -rf *)', 'Bash', { command: '$CMD -rf x' })).toBe(true);
    expect(holds('Bash(rm -rf *)', 'Bash', { command: 'echo "unterminated' })).toBe(true);
  });

  it('file tools match the file path; WebFetch the host; a bare tool name every call of it', () => {
    expect(holds('Edit(src/**)', 'Edit', { file_path: '/ws/src/a.ts' })).toBe(true);
    expect(holds('Edit(src/**)', 'Write', { file_path: 'src/b.ts' })).toBe(true);
    expect(holds('Edit(src/**)', 'Edit', { file_path: '/ws/docs/a.md' })).toBe(false);
    expect(holds('WebFetch(domain:github.com)', 'WebFetch', { url: 'https://github.com/x' })).toBe(true);
    expect(holds('WebFetch(domain:github.com)', 'WebFetch', { url: 'https://evil.example/x' })).toBe(false);
    expect(holds('Bash', 'Bash', { command: 'anything' })).toBe(true);
  });

  it('a hook with if runs only for the calls it names; an if that is no rule is reported and never runs', () => {
    const hook: ConfiguredHook = { event: 'PreToolUse', matcher: 'Bash', command: 'guard.sh', timeout: undefined, if: 'Bash(rm -rf *)', scope: 'user', source: 's', fingerprint: 'f' };
    const input = (command: string): HookInput => ({ hook_event_name: 'PreToolUse', session_id: 's', transcript_path: '', cwd: '/ws', tool_name: 'Bash', tool_input: { command }, tool_use_id: 't' });
    expect(hookMatches(hook, input('rm -rf dist'))).toBe(true);
    expect(hookMatches(hook, input('npm test'))).toBe(false);
    expect(compileIf('Bash(python *)|Bash(pytest *)')).toMatchObject({ ok: false });
    const dir = mkdtempSync(join(tmpdir(), 'keel-if-'));
    const path = join(dir, 'settings.json');
    const handler = (cond: string) => ({ type: 'command', command: 'guard.sh', if: cond });
    writeFileSync(path, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [handler('Bash(rm -rf *)'), handler('Bash(python *)|Bash(pytest *)')] }] } }));
    const loaded = loadHooksConfig([{ path, scope: 'user' }]);
    expect(loaded.hooks.map((h) => h.if)).toEqual(['Bash(rm -rf *)']);
    expect(loaded.problems.join('\n')).toMatch(/"if" holds one permission rule, not a list.*this hook never runs/);
  });
});
