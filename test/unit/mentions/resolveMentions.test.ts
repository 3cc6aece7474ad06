import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MENTION_LIMITS } from '../../../src/core/mentions/limits';
import { resolveMentions, type MentionContext } from '../../../src/core/mentions/resolveMentions';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';
import type { PermissionDecider } from '../../../src/core/runtime/permissionCheck';
import { SecretKeeper } from '../../../src/core/security/secretKeeper';
import { attachmentText } from '../../../src/shared/domain/attachments';

/**
 * The host's resolution of each kind of mention into what the model reads: real files and
 * folders in a temporary workspace, the real permission engine with a settings file, and the
 * editor's problems and terminal played by the test (the VS Code side is only their source).
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'keel-mentions-'));
  dirs.push(ws);
  mkdirSync(join(ws, 'src', 'deep', 'er', 'est'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(join(ws, 'src', 'deep', 'b.ts'), 'export const b = 1;\n');
  writeFileSync(join(ws, 'src', 'deep', 'er', 'est', 'c.ts'), 'c\n');
  writeFileSync(join(ws, 'README.md'), '# Readme\n');
  return ws;
}

const allowAll: PermissionDecider = { decide: async () => ({ decision: 'allow', reason: 'test' }), searchExclusions: async () => null };

function context(ws: string, over: Partial<MentionContext> = {}): MentionContext {
  return { workspace: ws, permissions: allowAll, mode: 'default', redact: (t) => t, signal: new AbortController().signal, ...over };
}

describe('resolving @ mentions', () => {
  it('a file comes whole, numbered as Read numbers lines; a line range brings those lines; the model reads them after the text', async () => {
    const ws = workspace();
    const [whole, range] = await resolveMentions('see @src/a.ts and @src/a.ts#L10-12.', context(ws));
    expect(whole).toMatchObject({ kind: 'file', label: 'src/a.ts' });
    expect(whole!.note).toBeUndefined();
    expect(whole!.content.split('\n')).toHaveLength(30);
    expect(whole!.content.split('\n')[0]).toBe('     1\tline 1');
    expect(range).toMatchObject({ kind: 'file', label: 'src/a.ts:10-12', content: '    10\tline 10\n    11\tline 11\n    12\tline 12' });
    expect(attachmentText(range!)).toBe('<attachment kind="file" name="src/a.ts:10-12">\n    10\tline 10\n    11\tline 11\n    12\tline 12\n</attachment>');
  });

  it('a long file is cut and the attachment says which lines came and how to read on', async () => {
    const ws = workspace();
    const [a] = await resolveMentions('@src/a.ts', context(ws, { limits: { fileLines: 5 } }));
    expect(a!.content.split('\n')).toHaveLength(5);
    expect(a!.note).toBe('lines 1-5 of 30: the rest was cut (mentions bring at most 5 lines, 60,000 characters); Read it with offset 6 for more');
    const [past] = await resolveMentions('@src/a.ts#L40-50', context(ws));
    expect(past).toMatchObject({ failed: true, note: 'the file has 30 lines; line 40 is past its end' });
    const [end] = await resolveMentions('@src/a.ts#L29-50', context(ws));
    expect(end).toMatchObject({ content: '    29\tline 29\n    30\tline 30', note: 'lines 29-30; the file ends at line 30' });
  });

  it('a folder is a bounded listing, folders first, deeper levels and node_modules named, not opened', async () => {
    const ws = workspace();
    mkdirSync(join(ws, 'src', 'node_modules', 'x'), { recursive: true });
    const [f] = await resolveMentions('@src/', context(ws, { limits: { folderDepth: 2 } }));
    expect(f).toMatchObject({ kind: 'folder', label: 'src/' });
    expect(f!.content.split('\n')).toEqual(['deep/', 'node_modules/', 'a.ts', 'deep/er/', 'deep/b.ts']);
    expect(f!.note).toContain('1 folder(s) such as .git or node_modules are named, not listed');
    expect(f!.note).toContain('1 folder(s) 2 levels down are named, not listed');
    const [few] = await resolveMentions('@src/', context(ws, { limits: { folderEntries: 2 } }));
    expect(few!.content.split('\n')).toHaveLength(2);
    expect(few!.note).toContain('more entries were cut (a listing shows at most 2)');
  });

  it('what cannot be had is said, not dropped: missing, outside the workspace, a link out of it, binary', async () => {
    const ws = workspace();
    const outside = mkdtempSync(join(tmpdir(), 'keel-outside-'));
    dirs.push(outside);
    writeFileSync(join(outside, 'id_rsa'), 'PRIVATE');
    symlinkSync(join(outside, 'id_rsa'), join(ws, 'src', 'key.txt'));
    writeFileSync(join(ws, 'blob.bin'), Buffer.from([1, 0, 2]));
    const got = await resolveMentions('@src/nope.ts @../x.ts @src/key.txt @blob.bin', context(ws));
    expect(got.map((a) => [a.label, a.failed, a.note])).toEqual([
      ['src/nope.ts', true, 'not attached: there is no such file or folder in the workspace'],
      ['../x.ts', true, 'not attached: it is outside the workspace'],
      ['src/key.txt', true, 'not attached: it is a link to a place outside the workspace'],
      ['blob.bin', true, 'it is a binary file; only text files can be attached'],
    ]);
    expect(got.every((a) => a.content === '')).toBe(true);
  });

  it('the person’s deny rules hold for mentions (the real engine, a settings file); what would ask is the person’s own request', async () => {
    const ws = workspace();
    mkdirSync(join(ws, '.keel'));
    mkdirSync(join(ws, 'secrets'));
    writeFileSync(join(ws, 'secrets', 'prod.env'), 'TOKEN=1');
    writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./secrets/**)', 'WebFetch(domain:evil.example)'] } }));
    const engine = lazyEngine({ workspace: ws, trust: NOTHING_APPROVED });
    let fetched = 0;
    const fetchUrl = async () => {
      fetched += 1;
      return { content: 'URL: https://docs.example/\n\nHello', isError: false, summary: 'ok' };
    };
    const got = await resolveMentions('@secrets/prod.env @README.md @https://evil.example/x @https://docs.example/', context(ws, { permissions: engine, fetchUrl }));
    expect(got[0]).toMatchObject({ label: 'secrets/prod.env', failed: true });
    expect(got[0]!.note).toMatch(/^not attached: your permission rules deny reading it/);
    expect(got[1]).toMatchObject({ label: 'README.md', content: '     1\t# Readme' });
    expect(got[2]).toMatchObject({ kind: 'url', failed: true });
    expect(got[2]!.note).toMatch(/^not fetched: your permission rules deny it/);
    expect(got[3]).toMatchObject({ kind: 'url', content: 'URL: https://docs.example/\n\nHello' });
    expect(fetched).toBe(1);
  });

  it('@problems: the editor’s diagnostics, errors first, bounded; of one file when named', async () => {
    const ws = workspace();
    const asked: (string | undefined)[] = [];
    const problems = async (path: string | undefined) => {
      asked.push(path);
      return [
        { path: 'src/a.ts', line: 3, column: 1, severity: 'warning' as const, message: 'unused', source: 'eslint' },
        { path: 'src/a.ts', line: 1, column: 7, severity: 'error' as const, message: "Type 'string' is not\n  assignable to type 'number'.", source: 'ts', code: '2322' },
      ];
    };
    const [all, one] = await resolveMentions('@problems and @problems:src/a.ts', context(ws, { problems }));
    expect(asked).toEqual([undefined, 'src/a.ts']);
    expect(all).toMatchObject({ kind: 'problems', label: 'problems' });
    expect(all!.content).toBe("1 error, 1 warning in the workspace:\nsrc/a.ts:1:7 error 2322 (ts): Type 'string' is not assignable to type 'number'.\nsrc/a.ts:3:1 warning (eslint): unused");
    expect(one).toMatchObject({ label: 'problems in src/a.ts' });
    expect(one!.content.startsWith('1 error, 1 warning in src/a.ts:')).toBe(true);
    const [cut] = await resolveMentions('@problems', context(ws, { problems, limits: { problems: 1 } }));
    expect(cut!.note).toBe('1 more problems were cut (at most 1 are attached, errors first)');
    const [none] = await resolveMentions('@problems', context(ws));
    expect(none).toMatchObject({ failed: true, note: 'not attached: the editor’s problems are only known inside VS Code' });
  });

  it('@terminal: the selection, else the last command with its output (colours gone, the end kept); secrets redacted', async () => {
    const ws = workspace();
    const secrets = new SecretKeeper({ values: ['sk-ant-api03-verysecretvalue-0123456789abcdef'] });
    const last = { commandLine: 'npm test', output: '\u001b[31mFAIL\u001b[0m key=sk-ant-api03-verysecretvalue-0123456789abcdef\r\n1 failed', exitCode: 1 };
    const [cmd] = await resolveMentions('@terminal', context(ws, { terminal: async () => ({ name: 'bash', lastCommand: last }), redact: (t) => secrets.redact(t) }));
    expect(cmd!.content).toContain('The last command in terminal "bash", exit code 1:\n$ npm test\nFAIL key=');
    expect(cmd!.content).not.toContain('verysecretvalue');
    expect(cmd!.content.endsWith('\n1 failed')).toBe(true);
    const [sel] = await resolveMentions('@terminal', context(ws, { terminal: async () => ({ name: 'zsh', selection: 'just this', lastCommand: last }) }));
    expect(sel!.content).toBe('The selection in terminal "zsh":\njust this');
    const [long] = await resolveMentions('@terminal', context(ws, { terminal: async () => ({ name: 'bash', selection: 'x'.repeat(50) + 'END' }), limits: { terminalChars: 10 } }));
    expect(long!.content.endsWith('xxxxxxxEND')).toBe(true);
    expect(long!.note).toBe('only the last 10 of 53 characters are attached; the start was cut');
    const [nothing] = await resolveMentions('@terminal', context(ws, { terminal: async () => ({ name: 'bash' }) }));
    expect(nothing!.failed).toBe(true);
    expect(nothing!.note).toContain('shell integration');
    const [closed] = await resolveMentions('@terminal', context(ws, { terminal: async () => null }));
    expect(closed!.note).toBe('not attached: no terminal is open');
  });

  it('@git goes through git (played here), leaves out files the rules deny, and cuts a long diff', async () => {
    const ws = workspace();
    const calls: (readonly string[])[] = [];
    const git = async (_ws: string, _s: AbortSignal, excluded: readonly string[]) => {
      calls.push(excluded);
      return { ok: true as const, changes: { status: ' M src/a.ts\n M secrets/x\n', paths: ['src/a.ts', 'secrets/x'], diff: 'diff --git a/src/a.ts b/src/a.ts\n' + '+x\n'.repeat(40) } };
    };
    const denySecrets: PermissionDecider = { decide: async (call) => (call.subject.kind === 'read' && call.subject.paths[0]!.includes('secrets') ? { decision: 'deny', reason: 'Read(./secrets/**)' } : { decision: 'allow', reason: '' }), searchExclusions: async () => null };
    const [g] = await resolveMentions('@git', context(ws, { git, permissions: denySecrets, limits: { gitChars: 50 } }));
    expect(calls).toEqual([[], ['secrets/x']]);
    expect(g!.content.startsWith('git status --short:\n M src/a.ts\n M secrets/x\n\ngit diff HEAD:\ndiff --git a/src/a.ts')).toBe(true);
    expect(g!.note).toContain('left out, as your permission rules deny reading them: secrets/x');
    expect(g!.note).toContain('the diff is cut at 50 of 153 characters');
    const [clean] = await resolveMentions('@git', context(ws, { git: async () => ({ ok: true, changes: { status: '', diff: '', paths: [] } }) }));
    expect(clean!.content).toBe('The working tree has no changes.');
    const [no] = await resolveMentions('@git', context(ws, { git: async () => ({ ok: false, why: 'the workspace is not in a git repository' }) }));
    expect(no).toMatchObject({ failed: true, note: 'not attached: the workspace is not in a git repository' });
  });

  it('one budget for the whole message: later attachments are cut, and say so; a mention named twice comes once; at most 20', async () => {
    const ws = workspace();
    const got = await resolveMentions('@src/a.ts @README.md @src/a.ts', context(ws, { limits: { totalChars: 300 } }));
    expect(got).toHaveLength(2);
    expect(got[0]!.content.length).toBe(300);
    expect(got[0]!.note).toContain('only its first 300 of');
    expect(got[1]).toMatchObject({ content: '', note: "the message's attachments are limited to 300 characters together, so none of this one was attached" });
    const many = Array.from({ length: 22 }, (_, i) => `@f${i}.ts`).join(' ');
    const all = await resolveMentions(many, context(ws));
    expect(all).toHaveLength(22);
    expect(all[21]).toMatchObject({ failed: true, note: 'not attached: a message attaches at most 20 mentions' });
    expect(MENTION_LIMITS.totalChars).toBeGreaterThan(MENTION_LIMITS.fileChars);
  });
});
