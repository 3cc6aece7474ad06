import { describe, expect, it } from 'vitest';
import { compilePathPattern } from '../../../src/core/permissions/paths';

/**
 * How far a Read rule reaches into a folder, and the ripgrep globs that skip exactly what it
 * matches there (paths.ts): what the Grep and Glob tools exclude and what makes a recursive
 * command ask (issue 22, item 3).
 */
const bases = { workspace: '/ws', home: '/home/u' };
const pat = (spec: string) => compilePathPattern(spec, '/ws', bases);

describe('a rule below a search root', () => {
  it('anchored rules', () => {
    expect(pat('./secrets/**').reach('/ws')).toBe('some');
    expect(pat('./secrets/**').ripgrepGlobs('/ws')).toEqual(['/secrets/**']);
    expect(pat('./secrets/**').reach('/ws/secrets')).toBe('all');
    expect(pat('./secrets/**').reach('/ws/secrets/deep')).toBe('all');
    expect(pat('./secrets/**').reach('/ws/src')).toBe('none');
    expect(pat('./secrets/**').ripgrepGlobs('/ws/src')).toEqual([]);
    expect(pat('./a/*/key').ripgrepGlobs('/ws/a')).toEqual(['/*/key']);
    expect(pat('./a/*/key').reach('/ws/b')).toBe('none');
    expect(pat('//etc/**').reach('/ws')).toBe('none');
  });

  it('unanchored rules reach any depth below their base', () => {
    expect(pat('*.pem').reach('/ws/src/deep')).toBe('some');
    expect(pat('*.pem').ripgrepGlobs('/ws')).toContain('/**/*.pem');
    expect(pat('.env').reach('/ws/.env')).toBe('all');
  });

  it('a root above the rule\'s base: the base is the glob\'s lead', () => {
    expect(pat('~/.ssh/**').ripgrepGlobs('/home')).toEqual(['/u/.ssh/**']);
    expect(pat('./secrets/**').ripgrepGlobs('/')).toEqual(['/ws/secrets/**']);
  });

  it('what ripgrep cannot be told exactly: null (the search then asks)', () => {
    expect(pat('./se**ts/**').ripgrepGlobs('/ws')).toBeNull();
    expect(pat('./se**ts/**').reach('/ws/src')).toBe('none');
  });

  it('escapes what the engine reads literally', () => {
    expect(pat('./a{b}/**').ripgrepGlobs('/ws')).toEqual(['/a\\{b\\}/**']);
    expect(pat('./x/**').ripgrepGlobs('/')).toEqual(['/ws/x/**']);
  });
});
