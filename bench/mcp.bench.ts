// MCP call overhead: an `echo` call of @modelcontextprotocol/server-everything through Keel's hub
// (the turn's permission check with the real engine and a rule that allows it, the permission
// machine, the mcpConnection machine and its spawned call actor, result conversion) against the
// same call through a bare SDK client. Main figure: both clients on ONE server process (Streamable
// HTTP, one session each), calls alternating, same run. Also the same over stdio (one process per
// client: stdio has one client per process), p99s and connect times. Prints one JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createActor, toPromise } from 'xstate';
import { McpHub } from '../src/core/mcp/hub';
import type { McpServerSpec } from '../src/core/mcp/types';
import { runMcpCall } from '../src/core/mcp/wiring';
import { validateToolCall, wirePermissionMachine } from '../src/core/runtime/permissionCheck';
import { lazyEngine } from '../src/core/runtime/permissionDecider';
import { createToolRegistry } from '../src/core/tools/registry';
import type { ToolUseBlock } from '../src/shared/domain/messages';

const EVERYTHING = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const WARMUP = Number(process.env.MCP_BENCH_WARMUP ?? 200);
const SAMPLES = Number(process.env.MCP_BENCH_SAMPLES ?? 1500);

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const round = (x: number, d = 3) => Number(x.toFixed(d));

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

async function startHttpServer(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((res, rej) => {
    const on = (d: Buffer) => /running on port|listening on port/i.test(d.toString()) && res();
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.once('exit', (c) => rej(new Error(`server exited ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

/**
 * Keel's path for one call, as the turn runs it: the turn loop wires the permission machine once
 * (wireTurnLoop → wirePermissionMachine) and, per call, validates it (`validatingInput`:
 * validateToolCall, which resolves the MCP tool), runs a permission machine actor with the real
 * engine (`permissionCheck`: the settings' stamp is checked, the rules applied), then the
 * `mcpCall` state's work (runMcpCall: the hub, the mcpConnection machine's call actor, the
 * result's conversion, the tool card's output event). `permissionMs` collects validation and
 * permission alone, to show where the overhead goes.
 */
function keelCaller(workspace: string, hub: McpHub, permissionMs: number[]) {
  // The bench's allow rule, as in a workspace the person approved.
  const engine = lazyEngine({ workspace, trust: { approves: () => true, version: () => 0 } });
  const services = { workspace, tools: createToolRegistry(), permissions: engine, asker: { ask: async () => ({ decision: 'deny' as const, feedback: 'bench' }) }, publish: () => {}, mcp: hub };
  const permission = wirePermissionMachine(services);
  return async (i: number): Promise<string> => {
    const call: ToolUseBlock = { type: 'tool_use', id: `toolu_${i}`, name: 'mcp__everything__echo', input: { message: `m${i}` } };
    const t0 = process.hrtime.bigint();
    const v = validateToolCall(services, call);
    if (!v.ok) throw new Error(`echo is not an MCP tool of the hub: ${JSON.stringify(v.result.content)}`);
    const c = v.call;
    const actor = createActor(permission, { input: { taskId: 'bench', requestId: c.requestId, toolCallId: c.id, tool: c.tool, input: c.input, subject: c.subject, readOnly: c.readOnly, mode: 'default' } });
    actor.start();
    const outcome = await toPromise(actor);
    if (outcome.decision !== 'allow') throw new Error(`the bench rule did not allow the call: ${JSON.stringify(outcome)}`);
    permissionMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const out = await runMcpCall(services, 'bench', call, new AbortController().signal);
    return String(out.result.content);
  };
}

function bareCaller(client: Client) {
  return async (i: number): Promise<string> => {
    const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    return (r.content as { text?: string }[])[0]?.text ?? '';
  };
}

/**
 * Wall-clock times of each side, and the CPU time this process spent per call on each side
 * (`process.cpuUsage` around each call: the client's own work — the server's is the same for
 * both). On a loaded machine wall-clock times mostly measure the scheduler; CPU time does not.
 */
async function timeAlternating(keel: (i: number) => Promise<string>, bare: (i: number) => Promise<string>): Promise<{ keel: number[]; bare: number[]; keelCpuUs: number; bareCpuUs: number }> {
  for (let i = 0; i < WARMUP; i++) {
    await keel(i);
    await bare(i);
  }
  const k: number[] = [];
  const b: number[] = [];
  const cpu = { keel: 0, bare: 0 };
  for (let i = 0; i < SAMPLES; i++) {
    // Alternate which goes first, so neither always runs on a warmer event loop.
    const pair = i % 2 === 0 ? [keel, bare] : [bare, keel];
    for (const f of pair) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const text = await f(i);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const c = process.cpuUsage(c0);
      if (text !== `Echo: m${i}`) throw new Error(`unexpected answer ${text}`);
      (f === keel ? k : b).push(ms);
      cpu[f === keel ? 'keel' : 'bare'] += c.user + c.system;
    }
  }
  return { keel: k, bare: b, keelCpuUs: cpu.keel / SAMPLES, bareCpuUs: cpu.bare / SAMPLES };
}

async function hubFor(workspace: string, spec: McpServerSpec): Promise<{ hub: McpHub; connectMs: number }> {
  const hub = new McpHub({ workspace, keelHome: mkdtempSync(join(tmpdir(), 'keel-bench-home-')), config: { servers: [{ name: 'everything', scope: 'user', source: 'bench', template: spec, resolved: spec, problems: [] }], problems: [] } });
  const t0 = performance.now();
  await hub.start();
  const connectMs = performance.now() - t0;
  if (hub.status()[0]!.phase !== 'ready') throw new Error(`server not ready: ${hub.status()[0]!.lastError}`);
  await hub.toolDefinitions();
  return { hub, connectMs };
}

async function main() {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-bench-ws-'));
  mkdirSync(join(workspace, '.keel'));
  writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['mcp__everything__echo'] } }));

  // One server process, two sessions.
  const http = await startHttpServer();
  const { hub: httpHub, connectMs: httpConnectMs } = await hubFor(workspace, { transport: 'http', url: http.url, headers: {} });
  const bareHttp = new Client({ name: 'bare', version: '0' });
  const tHttp = performance.now();
  await bareHttp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  const bareHttpConnectMs = performance.now() - tHttp;
  const permissionMs: number[] = [];
  const overHttp = await timeAlternating(keelCaller(workspace, httpHub, permissionMs), bareCaller(bareHttp));
  await bareHttp.close();
  await httpHub.dispose();
  http.child.kill();

  // stdio: one process per client.
  const stdioSpec: McpServerSpec = { transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {} };
  const { hub: stdioHub, connectMs: stdioConnectMs } = await hubFor(workspace, stdioSpec);
  const bareStdio = new Client({ name: 'bare', version: '0' });
  const t0 = performance.now();
  await bareStdio.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  const bareStdioConnectMs = performance.now() - t0;
  const overStdio = await timeAlternating(keelCaller(workspace, stdioHub, []), bareCaller(bareStdio));
  await bareStdio.close();
  await stdioHub.dispose();

  const p50 = (xs: number[]) => percentile(xs, 50);
  const result = {
    mcp_call_overhead_ratio: round(p50(overHttp.keel) / p50(overHttp.bare)),
    keel_echo_p50_ms: round(p50(overHttp.keel)),
    keel_echo_p99_ms: round(percentile(overHttp.keel, 99)),
    sdk_echo_p50_ms: round(p50(overHttp.bare)),
    sdk_echo_p99_ms: round(percentile(overHttp.bare, 99)),
    keel_permission_check_p50_ms: round(p50(permissionMs.slice(WARMUP))),
    keel_client_cpu_us_per_call: Math.round(overHttp.keelCpuUs),
    sdk_client_cpu_us_per_call: Math.round(overHttp.bareCpuUs),
    client_cpu_ratio: round(overHttp.keelCpuUs / overHttp.bareCpuUs),
    mcp_call_overhead_ratio_stdio: round(p50(overStdio.keel) / p50(overStdio.bare)),
    keel_echo_stdio_p50_ms: round(p50(overStdio.keel)),
    keel_echo_stdio_p99_ms: round(percentile(overStdio.keel, 99)),
    sdk_echo_stdio_p50_ms: round(p50(overStdio.bare)),
    sdk_echo_stdio_p99_ms: round(percentile(overStdio.bare, 99)),
    keel_client_cpu_us_per_call_stdio: Math.round(overStdio.keelCpuUs),
    sdk_client_cpu_us_per_call_stdio: Math.round(overStdio.bareCpuUs),
    client_cpu_ratio_stdio: round(overStdio.keelCpuUs / overStdio.bareCpuUs),
    keel_connect_stdio_ms: Math.round(stdioConnectMs),
    sdk_connect_stdio_ms: Math.round(bareStdioConnectMs),
    keel_connect_http_ms: Math.round(httpConnectMs),
    sdk_connect_http_ms: Math.round(bareHttpConnectMs),
    warmup: WARMUP,
    samples: SAMPLES,
    cpus: os.cpus().length,
    loadavg_1m: round(os.loadavg()[0]!, 2),
    note: 'ratio: same server-everything process over Streamable HTTP, one session per client, calls alternating; _stdio: one process per client; client_cpu: CPU time of this process per call (the client side only)',
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
void main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
