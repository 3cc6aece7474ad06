import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox, isExcluded } from '../../../src/core/permissions/sandbox';
import { createBashTool } from '../../../src/core/tools/bash';
import { makeContext, makeTempDir } from '../tools/helpers';

const avail = detectSandbox();
let ws: { dir: string; cleanup: () => void };
let outside: { dir: string; cleanup: () => void };
let server: Server | undefined;
beforeEach(() => {
  ws = makeTempDir('keel-sbx-ws-');
  // Not under /tmp: the sandbox gives /tmp a private tmpfs, so /var/tmp shows the read-only root.
  const dir = mkdtempSync('/var/tmp/keel-sbx-out-');
  outside = { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
});
afterEach(async () => {
  ws.cleanup();
  outside.cleanup();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

describe.runIf(avail.available)('Bash in the bubblewrap sandbox (real bwrap)', () => {
  const tool = createBashTool({ sandbox: { enabled: true, excludedCommands: ['touch'] } });

  it('writes inside the workspace, cannot write outside it', async () => {
    const target = join(outside.dir, 'pwned');
    const r = await tool.invoke({ command: `echo in > inside.txt && echo out > ${target}` }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/Read-only file system/);
    expect(readFileSync(join(ws.dir, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(target)).toBe(false);
  });

  it('has no network unless allowed', async () => {
    server = createServer((_q, s) => s.end('hello'));
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const cmd = `node -e "fetch('http://127.0.0.1:${port}').then(r=>r.text()).then(t=>console.log('got',t),e=>{console.log('net-fail');process.exit(3)})"`;
    const blocked = await tool.invoke({ command: cmd }, makeContext(ws.dir));
    expect(blocked.content).toContain('net-fail');
    const open = createBashTool({ sandbox: { enabled: true, allowNetwork: true } });
    const allowed = await open.invoke({ command: cmd }, makeContext(ws.dir));
    expect(allowed.content).toContain('got hello');
  });

  it('excluded commands and dangerouslyDisableSandbox run directly', async () => {
    const target = join(outside.dir, 'direct');
    const r = await tool.invoke({ command: `touch ${target}` }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(existsSync(target)).toBe(true);
    const target2 = join(outside.dir, 'direct2');
    const r2 = await tool.invoke({ command: `echo x > ${target2}`, dangerouslyDisableSandbox: true }, makeContext(ws.dir));
    expect(r2.isError).toBe(false);
    expect(existsSync(target2)).toBe(true);
  });
});

it('says clearly when bwrap is missing', async () => {
  const missing = detectSandbox('/nonexistent/bwrap');
  expect(missing).toEqual({ available: false, reason: expect.stringMatching(/not installed/) });
  const tool = createBashTool({ sandbox: { enabled: true, bwrapPath: '/nonexistent/bwrap' } });
  writeFileSync(join(ws.dir, 'f'), '');
  const r = await tool.invoke({ command: 'rm f' }, makeContext(ws.dir));
  expect(r).toMatchObject({ isError: true, summary: 'sandbox unavailable' });
  expect(existsSync(join(ws.dir, 'f'))).toBe(true);
});

it('an excluded prefix never covers a compound command', () => {
  expect(isExcluded('docker ps', ['docker'])).toBe(true);
  expect(isExcluded('dockerx ps', ['docker'])).toBe(false);
  expect(isExcluded('docker ps; rm -rf ~', ['docker'])).toBe(false);
});
