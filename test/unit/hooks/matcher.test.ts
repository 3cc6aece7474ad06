import { describe, expect, it } from 'vitest';
import { compileMatcher } from '../../../src/core/hooks/matcher';

/** Claude Code's matcher rules: match-all, exact names and lists, unanchored regular expressions. */
describe('compileMatcher', () => {
  const matches = (m: string | undefined, v: string) => {
    const c = compileMatcher(m);
    if (!c.ok) throw new Error(c.error);
    return c.test(v);
  };

  it('matches everything for "*", "" or no matcher', () => {
    for (const m of ['*', '', undefined]) expect(matches(m, 'Bash')).toBe(true);
  });

  it('compares plain names exactly, with | and , lists', () => {
    expect(matches('Bash', 'Bash')).toBe(true);
    expect(matches('Bash', 'BashOutput')).toBe(false);
    expect(matches('Edit|Write', 'Write')).toBe(true);
    expect(matches('Edit, Write', 'Edit')).toBe(true);
    expect(matches('Edit|Write', 'NotebookEdit')).toBe(false);
    expect(matches('code-reviewer', 'senior-code-reviewer')).toBe(false);
  });

  it('treats anything else as an unanchored regular expression', () => {
    expect(matches('Edit.*', 'NotebookEdit')).toBe(true);
    expect(matches('^Edit$', 'NotebookEdit')).toBe(false);
    expect(matches('Edit.*', 'Edit')).toBe(true);
    expect(matches('^Notebook', 'NotebookEdit')).toBe(true);
    expect(matches('mcp__memory__.*', 'mcp__memory__create')).toBe(true);
    expect(matches('mcp__memory__.*', 'mcp__github__x')).toBe(false);
  });

  it('reports an invalid regular expression instead of matching anything', () => {
    expect(compileMatcher('Bash(')).toMatchObject({ ok: false });
  });
});
