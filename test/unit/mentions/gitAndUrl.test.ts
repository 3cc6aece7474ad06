import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveMentions, type MentionContext } from '../../../src/core/mentions/resolveMentions';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * `@git` with the real git in a real repository, and `@https://…` fetched from a real HTTP server
 * on loopback through WebFetch (an integration test: it runs git and listens on a socket).
 */
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function repo(): string {
  const ws = mkdtempSync(join(tmpdir(), 'keel-mention-git-'));
  cleanup.push(() => rmSync(ws, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: ws });
  git('init', '-q');
  writeFileSync(join(ws, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(ws, 'secret.txt'), 'old\n');
  git('add', '.');
  git('commit', '-qm', 'first');
  writeFileSync(join(ws, 'a.txt'), 'one\nTWO\n');
  writeFileSync(join(ws, 'secret.txt'), 'TOKEN=hunter2\n');
  writeFileSync(join(ws, 'new.txt'), 'brand new\n');
  return ws;
}

const ctx = (ws: string, over: Partial<MentionContext> = {}): MentionContext => ({
  workspace: ws,
  permissions: lazyEngine({ workspace: ws, trust: NOTHING_APPROVED }),
  mode: 'default',
  redact: (t) => t,
  signal: new AbortController().signal,
  ...over,
});

describe('@git with the real git', () => {
  it('attaches the status and the diff against HEAD, without files the rules deny', async () => {
    const ws = repo();
    writeFileSync(join(ws, '.gitignore'), '.keel/\n');
    execFileSync('mkdir', ['-p', join(ws, '.keel')]);
    writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./secret.txt)'] } }));
    const [g] = await resolveMentions('what did I change? @git', ctx(ws));
    expect(g).toMatchObject({ kind: 'git', label: 'git' });
    expect(g!.failed).toBeUndefined();
    expect(g!.content).toContain(' M a.txt');
    expect(g!.content).toContain('?? new.txt');
    expect(g!.content).toContain('-two\n+TWO');
    expect(g!.content).not.toContain('hunter2');
    expect(g!.note).toBe('left out, as your permission rules deny reading them: secret.txt');
  });

  it('does not run git in a repository whose config could make it run a program', async () => {
    const ws = repo();
    const marker = join(ws, 'ran');
    writeFileSync(join(ws, 'monitor.sh'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    execFileSync('git', ['config', 'core.fsmonitor', join(ws, 'monitor.sh')], { cwd: ws });
    const [g] = await resolveMentions('@git', ctx(ws));
    expect(g!.failed).toBe(true);
    expect(g!.note).toMatch(/^not attached: Keel does not run git here: /);
    expect(existsSync(marker)).toBe(false);
  });

  it('says when the workspace is not in a repository', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'keel-mention-nogit-'));
    cleanup.push(() => rmSync(ws, { recursive: true, force: true }));
    const [g] = await resolveMentions('@git', ctx(ws));
    expect(g).toMatchObject({ failed: true, note: 'not attached: the workspace is not in a git repository' });
  });
});

describe('@https://… through WebFetch', () => {
  it('fetches the page as text, bounded, and says it was cut', async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><h1>Docs</h1><p>${'word '.repeat(400)}</p></body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
    const ws = mkdtempSync(join(tmpdir(), 'keel-mention-url-'));
    cleanup.push(() => rmSync(ws, { recursive: true, force: true }));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/docs`;
    const [page] = await resolveMentions(`read @${url}`, ctx(ws, { limits: { urlChars: 200 } }));
    expect(page).toMatchObject({ kind: 'url', label: url });
    expect(page!.content).toContain('Docs');
    expect(page!.note).toBe('the page is cut at 200 characters');
    const [gone] = await resolveMentions('@http://127.0.0.1:9/nothing', ctx(ws));
    expect(gone!.failed).toBe(true);
    expect(gone!.note).toMatch(/^not fetched: Could not fetch/);
  });
});
