import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, filesUnder, ofType, pieces, runCli } from './cliHarness';

/**
 * Issue 21, items 5 and 6, driven as an attacker would, through `keel run` (the built CLI) with
 * the real Anthropic provider against the fake model server:
 * - another local process races to take a worker's place (it connects to whatever socket appears
 *   where Keel makes its files) — it must never receive a query or the key;
 * - a command the model runs reads the environment block of every ancestor process
 *   (`/proc/<pid>/environ`, base64-encoded so no redactor recognises the key) — Keel's own must
 *   not hold the key, in process and on a worker.
 */
const KEY = `sk-ant-api03-${'Kx3_'.repeat(23)}qAA`;
const base = (url: string, workspace: string) => ['--provider', 'anthropic', '--base-url', url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'];

let server: FakeModelServer;
let workspace: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer({ requireApiKey: KEY });
  workspace = mkdtempSync(join(tmpdir(), 'keel-keys-ws-'));
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await server.close();
});

/**
 * A local process that takes a worker's place if it can: it watches `dir` (Keel's temp folder,
 * with inotify: it hears of a new file at once) and connects to every Unix socket that appears
 * in it, saying `ready` as a worker would; everything it receives goes to its stdout.
 */
const IMPOSTOR = `
const fs = require('node:fs'), net = require('node:net'), path = require('node:path');
const tried = new Set();
function look(d) {
  let names = [];
  try { names = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
  for (const n of names) {
    const p = path.join(d, n.name);
    if (n.isDirectory() && !tried.has(p)) {
      tried.add(p);
      watch(p);
    } else if (n.isSocket() && !tried.has(p)) {
      tried.add(p);
      process.stderr.write('socket ' + p + '\\n');
      const s = net.connect(p);
      s.on('error', () => {});
      s.on('connect', () => s.write(JSON.stringify({ type: 'ready', pid: process.pid, protocol: 1 }) + '\\n'));
      s.on('data', (d) => { process.stdout.write(d); s.destroy(); });
    }
  }
}
function watch(d) {
  try { fs.watch(d, () => look(d)); } catch {}
  look(d);
}
watch(process.argv[1]);
`;

describe.runIf(process.platform === 'linux')('no other local process gets the key or the query', () => {
  it('an impostor racing for the worker\'s socket gets nothing; the model\'s command cannot write to the channel', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'keel-keys-tmp-'));
    const impostor = spawn(process.execPath, ['-e', IMPOSTOR, tmp], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(impostor);
    let stolen = '';
    let sockets = '';
    impostor.stdout!.setEncoding('utf8').on('data', (d: string) => (stolen += d));
    impostor.stderr!.setEncoding('utf8').on('data', (d: string) => (sockets += d));
    server.enqueue(
      // A command the model runs tries the worker's channel (fd 3 of its parent) as its own.
      { blocks: [{ type: 'tool_use', id: 'toolu_fd', name: 'Bash', input: { command: `echo '{"type":"shutdown_ack"}' >&3; echo "fd3=$?"; ls /proc/self/fd` } }] },
      { blocks: [{ type: 'text', text: 'All done.' }] },
    );
    const run = await runCli(['run', 'do the work', ...base(server.url, workspace), '--workers', '1'], { ANTHROPIC_API_KEY: KEY, KEEL_MEMORY: 'off', TMPDIR: tmp });
    const { code } = await run.exit;
    expect(stolen, 'what the impostor received').toBe('');
    // Not only did it lose the race: there was nothing to race for. The channel is a socketpair
    // the worker inherits, never a socket file another process could connect to (the race that
    // issue 21 item 5 won needs such a file; losing it here would prove nothing).
    expect(sockets, 'sockets that appeared where Keel makes its files').toBe('');
    expect(code, run.stderr()).toBe(0);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    // The real worker had the key: the model server (which answers 401 without it) answered both requests.
    expect(server.requests).toHaveLength(2);
    const output = ofType(run.events, 'tool_output').map((e) => e.chunk).join('');
    expect(output).toMatch(/fd3=1/);
    expect(output).toMatch(/3: Bad file descriptor/);
  });
});

describe.runIf(process.platform === 'linux').each([
  ['in process', [] as string[]],
  ['on a worker', ['--workers', '1']],
])('/proc/<pid>/environ of Keel holds no key (%s)', (_where, extra) => {
  it('neither the model\'s command nor another process reads it there', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Every ancestor's environment block, base64-encoded: no redactor recognises the key in it.
    const walk = 'p=$$; while [ "$p" -gt 1 ]; do echo "pid $p $(base64 -w0 < /proc/$p/environ)"; p=$(awk \'{print $4}\' /proc/$p/stat); done';
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_walk', name: 'Bash', input: { command: walk } }] },
      { blocks: [{ type: 'text', text: 'Looked.' }], fault: { kind: 'stall', afterEvents: 2, until: held } },
    );
    const run = await runCli(['run', 'look around', ...base(server.url, workspace), ...extra], { ANTHROPIC_API_KEY: KEY, KEEL_MEMORY: 'off', MY_KEY_COPY: `copy:${KEY}` });
    await waitUntil(() => server.requests.length === 2, () => `the second request (stderr: ${run.stderr()})`, 60_000);
    // Another process of the same user, while Keel runs.
    const environ = readFileSync(`/proc/${run.child.pid!}/environ`, 'latin1');
    release();
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(pieces(environ, KEY), 'the CLI\'s /proc/<pid>/environ').toEqual([]);
    expect(environ).toContain('KEEL_MEMORY=off');

    // The command read Keel's block (its own pid is among the ancestors), and found no key there.
    const result = JSON.stringify(server.requests[1]!.body);
    const lines = [...result.matchAll(/pid (\d+) ([A-Za-z0-9+/=]*)/g)];
    expect(lines.map((m) => Number(m[1]))).toContain(run.child.pid);
    const decoded = lines.map((m) => Buffer.from(m[2]!, 'base64').toString('latin1')).join('\n');
    expect(decoded).toContain('KEEL_MEMORY=off');
    expect(pieces(decoded, KEY), 'an ancestor\'s environment block').toEqual([]);
    const taskLog = filesUnder(run.storage).map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(pieces(taskLog, KEY)).toEqual([]);
  });
});
