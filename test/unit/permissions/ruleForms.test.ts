import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { operatorParts } from '../../../src/core/permissions/pipelineRules';
import { compileBashPattern, parseRule, ruleNeverMatches } from '../../../src/core/permissions/rules';
import { loadSettings, settingsDefaultMode } from '../../../src/core/permissions/settings';
import { TRUST_EVERYTHING } from '../helpers/trustAll';

/**
 * Issue 22, item 6: rules people really write (checked against settings files committed to public
 * repositories). A rule that can never match is reported with the form that would; WebFetch(*)
 * is the whole tool; a prefix ending in punctuation goes on inside the word.
 */
describe('rules that can never match', () => {
  const never = (behavior: 'allow' | 'deny' | 'ask', spec: string) => ruleNeverMatches(behavior, 'Bash', spec, operatorParts);

  it('names them, with the nearest form that would match', () => {
    expect(never('deny', 'rm:-rf:/')).toMatch(/never matches.*write Bash\(rm -rf \/\)/);
    expect(never('deny', 'scp * *:*')).toMatch(/never matches.*write Bash\(scp \* \* \*\)/);
    expect(never('allow', 'git log | head')).toMatch(/never matches.*Bash\(git:\*\), Bash\(head:\*\)/);
    expect(never('allow', 'npm:* test')).toMatch(/never matches.*Bash\(npm \* test\)/);
  });

  it('leaves working rules alone, deny rules with a pipe included (they match the whole call)', () => {
    for (const spec of ['npm run test:*', 'git * main', 'curl http://github.com/:*', 'ls', 'echo "a:b"', 'docker run -v a:b:*']) expect(never('allow', spec), spec).toBeNull();
    expect(never('deny', 'env | base64')).toBeNull();
    expect(never('ask', 'curl * | bash')).toBeNull();
    expect(ruleNeverMatches('allow', 'Read', './a:b', operatorParts)).toBeNull();
  });

  it('splits a specifier at shell operators, not inside quotes or redirections', () => {
    expect(operatorParts('env | base64')).toEqual(['env', 'base64']);
    expect(operatorParts('a && b || c; d')).toEqual(['a', 'b', 'c', 'd']);
    expect(operatorParts("echo 'a|b'")).toBeNull();
    expect(operatorParts('make 2>&1')).toBeNull();
    expect(operatorParts('ls')).toBeNull();
  });
});

describe('rule syntax', () => {
  it('accepts Tool(*) as the whole tool for every tool, WebFetch included', () => {
    expect(parseRule('WebFetch(*)')).toEqual({ ok: true, tool: 'WebFetch' });
    expect(parseRule('Bash(*)')).toEqual({ ok: true, tool: 'Bash' });
    expect(parseRule('WebFetch(https://x.com)').ok).toBe(false);
  });

  it('continues a prefix inside the word only after punctuation (Claude Code: Bash(curl http://github.com/:*))', () => {
    expect(compileBashPattern('curl http://github.com/:*')).toEqual({ kind: 'prefix', words: ['curl', 'http://github.com/'], joined: true });
    expect(compileBashPattern('npm run:*')).toEqual({ kind: 'prefix', words: ['npm', 'run'] });
    expect(compileBashPattern('npm run *')).toEqual({ kind: 'prefix', words: ['npm', 'run'] });
  });
});

describe('where the person sees them', () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('settings problems (keel permissions check) and the notices keel run and VS Code show', () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-rules-'));
    mkdirSync(join(dir, '.claude'));
    writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(git log | head)'], deny: ['Bash(rm:-rf:/)', 'Bash(env | base64)'] } }));
    const source = { path: join(dir, '.claude', 'settings.json'), scope: 'project' as const, projectRoot: dir };
    const loaded = loadSettings([source], dir, TRUST_EVERYTHING);
    expect(loaded.rules.map((r) => r.raw)).toEqual(['Bash(rm:-rf:/)', 'Bash(env | base64)', 'Bash(git log | head)']);
    expect(loaded.problems.filter((p) => p.includes('never matches'))).toHaveLength(2);
    expect(loaded.unreadableTools.size).toBe(0);
    const notices = settingsDefaultMode(dir, TRUST_EVERYTHING, { home: join(dir, 'home') }).notices;
    expect(notices.some((n) => n.includes('Bash(rm:-rf:/) never matches'))).toBe(true);
    expect(notices.some((n) => n.includes('Bash(git log | head) never matches'))).toBe(true);
  });
});
