import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox, isExcluded } from '../../../src/core/sandbox/bwrap';
import { Sandbox } from '../../../src/core/sandbox/sandbox';
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
  const tool = createBashTool({ sandbox: new Sandbox({ enabled: true, excludedCommands: ['touch'] }) });

  it('writes inside the workspace, cannot write outside it', async () => {
    const target = join(outside.dir, 'pwned');
    const r = await tool.invoke({ command: `echo in > inside.txt && echo out > ${target}` }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/Read-only file system/);
    expect(readFileSync(join(ws.dir, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(target)).toBe(false);
  });

  it('has no network: not even the host loopback', async () => {
    server = createServer((_q, s) => s.end('hello'));
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const cmd = `node -e "fetch('http://127.0.0.1:${port}').then(r=>r.text()).then(t=>console.log('got',t),e=>{console.log('net-fail');process.exit(3)})"`;
    const blocked = await tool.invoke({ command: cmd }, makeContext(ws.dir));
    expect(blocked.content).toContain('net-fail');
    const direct = await createBashTool().invoke({ command: cmd }, makeContext(ws.dir));
    expect(direct.content).toContain('got hello');
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

  it('a command killed on timeout takes everything it started with it', async () => {
    const r = await tool.invoke({ command: 'sleep 30 & sleep 30; echo never', timeout: 300 }, makeContext(ws.dir));
    expect(r).toMatchObject({ isError: true, summary: 'timed out after 300 ms' });
    expect(r.content).not.toContain('never');
  });
});

it('says clearly when bwrap is missing, and does not run the command', async () => {
  const missing = detectSandbox('/nonexistent/bwrap');
  expect(missing).toEqual({ available: false, reason: expect.stringMatching(/not installed/) });
  const tool = createBashTool({ sandbox: new Sandbox({ enabled: true, bwrapPath: '/nonexistent/bwrap' }) });
  writeFileSync(join(ws.dir, 'f'), '');
  const r = await tool.invoke({ command: 'rm f' }, makeContext(ws.dir));
  expect(r).toMatchObject({ isError: true, summary: 'sandbox unavailable' });
  expect(r.content).toContain('bubblewrap (bwrap) is not installed');
  expect(existsSync(join(ws.dir, 'f'))).toBe(true);
});

it('an excluded prefix never covers a compound command', () => {
  expect(isExcluded('docker ps', ['docker'])).toBe(true);
  expect(isExcluded('docker ps', ['docker *'])).toBe(true);
  expect(isExcluded('docker ps', ['docker:*'])).toBe(true);
  expect(isExcluded('dockerx ps', ['docker'])).toBe(false);
  expect(isExcluded('dockerx ps', ['docker *'])).toBe(false);
  expect(isExcluded('docker ps; rm -rf ~', ['docker'])).toBe(false);
  expect(isExcluded('docker $(rm -rf ~)', ['docker'])).toBe(false);
  expect(isExcluded('anything', ['*', ' '])).toBe(false);
});
