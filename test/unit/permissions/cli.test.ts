import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBundle } from '../../integration/cli/cliHarness';
import { makeFixture, type PermissionFixture } from './fixture';

let cli: string;
let fx: PermissionFixture;

beforeAll(async () => {
  // dist/cli.js when it is newer than the sources, else the CLI alone built once into a temp folder
  // (the whole build, extension and webview too, took most of this hook's two minutes on a
  // loaded machine, and once all of them: CI failed on the hook's timeout).
  cli = await cliBundle();
  fx = await makeFixture();
  // Keel's home for these checks: a --storage folder must exist (a typo is bad usage, never a new store).
  mkdirSync(join(fx.root, 'keel-home'));
  // The corpus's rules are the workspace's own: the person approved them (docs/permissions.md, "Trust").
  execFileSync(process.execPath, [cli, 'trust', 'approve', '--workspace', fx.ws, '--storage', join(fx.root, 'keel-home')], { encoding: 'utf8', env: { ...process.env, HOME: fx.home } });
}, 120_000);
afterAll(() => fx.cleanup());

function check(args: string[]): { decision: string; reason: string; rule: string | null } {
  const out = execFileSync(process.execPath, [cli, 'permissions', 'check', '--workspace', fx.ws, '--home', fx.home, '--storage', join(fx.root, 'keel-home'), ...args], { encoding: 'utf8', cwd: fx.root });
  const lines = out.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as { decision: string; reason: string; rule: string | null };
}

describe('keel permissions check (built CLI)', () => {
  it('prints one JSON line per decision and exits 0', () => {
    expect(check(['--tool', 'Bash', '--input', '{"command":"ls"}'])).toMatchObject({ decision: 'allow' });
    expect(check(['--tool', 'Bash', '--input', '{"command":"git status; rm -rf /"}'])).toMatchObject({ decision: 'deny', rule: 'Bash(rm:*)' });
    expect(check(['--tool', 'Bash', '--input', '{"command":"git status > ~/.ssh/authorized_keys"}'])).toMatchObject({ decision: 'ask', rule: null });
    expect(check(['--tool', 'Write', '--input', '{"file_path":"src/a.ts","content":"x"}'])).toMatchObject({ decision: 'allow', rule: 'Edit(./src/**)' });
    expect(check(['--tool', 'Write', '--input', '{"file_path":"README.md","content":"x"}', '--mode', 'acceptEdits'])).toMatchObject({ decision: 'allow' });
    expect(check(['--tool', 'Bash', '--input', '{"command":"npm publish"}', '--mode', 'dontAsk'])).toMatchObject({ decision: 'deny' });
    // Six CLI starts: on a loaded 2-core machine they take longer than the default 30 s.
  }, 300_000);

  it('reads extra --settings files (rules relative to their project)', () => {
    const extra = join(fx.root, 'extra.json');
    writeFileSync(extra, JSON.stringify({ permissions: { allow: ['Bash(npm publish)'] } }));
    expect(check(['--tool', 'Bash', '--input', '{"command":"npm publish"}', '--settings', extra])).toMatchObject({ decision: 'allow', rule: 'Bash(npm publish)' });
  });

  it('reports a rule that can never match with the form that would, and keeps deciding', () => {
    const extra = join(fx.root, 'never.json');
    writeFileSync(extra, JSON.stringify({ permissions: { deny: ['Bash(rm:-rf:/)'], allow: ['Bash(git log | head)'] } }));
    const out = execFileSync(process.execPath, [cli, 'permissions', 'check', '--workspace', fx.ws, '--home', fx.home, '--tool', 'Bash', '--input', '{"command":"git status"}', '--settings', extra], { encoding: 'utf8', cwd: fx.root });
    const line = JSON.parse(out.trim()) as { decision: string; problems?: string[] };
    expect(line.decision).toBe('allow');
    expect(line.problems?.join('\n')).toMatch(/rm:-rf:\/\).*never matches.*Bash\(rm -rf \/\)/);
    expect(line.problems?.join('\n')).toMatch(/git log \| head\).*never matches/);
  });

  it('exits 2 on bad usage', () => {
    expect(() => execFileSync(process.execPath, [cli, 'permissions', 'check', '--input', '{}'], { stdio: 'ignore' })).toThrow();
  });
});
