// The worker pool as a host sees it, against the fake model server (real loopback HTTP, real SSE)
// with the real Anthropic provider, the real worker bundle as the worker (`worker.js`, built as
// scripts/build.mjs builds dist/, minified; started as hosts start it: `workerCommandBeside`):
//  - warm_vs_cold_dispatch_ratio: (spawn + ready + first streamed text) ÷ (a warm worker's query
//    to first streamed text), medians, same run;
//  - idle_worker_rss_mb: resident memory (the OS's RSS, `process.memoryUsage().rss`) an idle
//    worker reports in its health answer after serving 6 queries; fresh_worker_rss_mb: the same
//    for a worker that has just said `ready`; for insight, idle_worker_pss_mb (the idle worker's
//    proportional set size, /proc/PID/smaps_rollup: pages it shares with other processes, such
//    as the `node` binary's, counted in part) and analysing_worker_rss_mb (RSS of the worker that
//    ran the CPU-bound phase below: it has loaded the permission engine and tree-sitter's wasm,
//    which a worker loads only on its first permission decision);
//  - host_max_event_loop_block_ms: the host's longest event-loop delay while 4 tasks stream
//    8k-token answers in small chunks and run a command each, with workers, and the same run in
//    the host (in-host), and their ratio. The histogram is enabled HISTOGRAM_PRIME_MS before
//    the four tasks start: monitorEventLoopDelay measures a delay only once it has taken a
//    sample, so the turn that starts the four tasks at once (for the pool: creating four
//    workers) was invisible when it came right after `enable()`, and it is the host's
//    longest turn of the run;
//  - big_answer_* and big_resume_*: a 50 MB answer through `keel run --workers 1` (the built CLI),
//    then `keel run --resume` of it, against the same with `--workers 0` (in the host), and the
//    resume against a bare parse of the task's log (bench/bigAnswer.ts). `KEEL_POOL_BENCH=big`
//    runs this phase alone;
//  - parallel_speedup_4_workers: four CPU-bound scripted tasks (each asks, turn after turn, to
//    run a long shell command whose permission analysis — tree-sitter parse and rule checks in
//    the worker — is the work) on a pool of 4 workers vs a pool of 1, wall time ratio. It cannot
//    exceed the machine's free cores: the core count is reported beside it.
// The fake model server runs in a child process of its own (this same bundle, `KEEL_BENCH_ROLE=
// server`): a model server is never inside the host, and its frame building would otherwise be
// counted as the host's event-loop block.
// Prints one JSON line. Figures on a loaded 2-core machine are noisy: the core count is reported.
import { fork, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as esbuild from 'esbuild';
import { buildWorker } from '../scripts/sharedCore.mjs';
import { bigAnswer } from './bigAnswer';
import { TaskRuntime } from '../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../src/core/runtime/types';
import { workerCommandBeside } from '../src/core/workers/spawnWorker';
import { startFakeModelServer, type FakeTurn } from '../test/fixtures/fake-model-server';

/** The fake model server as the bench uses it, in another process. */
interface FakeModelServer {
  url: string;
  /** Resolves once the server has the turns. */
  enqueue(...turns: FakeTurn[]): Promise<void>;
  close(): Promise<void>;
}

/** Starts the fake model server in a child process (this bundle again); turns go to it over IPC, in order. */
async function serverProcess(): Promise<FakeModelServer> {
  const child: ChildProcess = fork(__filename, [], { env: { ...process.env, KEEL_BENCH_ROLE: 'server' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fake model server process exited (${code})`)));
  });
  return {
    url,
    enqueue: (...turns) =>
      new Promise<void>((resolve) => {
        child.once('message', () => resolve());
        child.send({ turns });
      }),
    close: async () => {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** The child's side: serves turns as they come over IPC. Enqueued in send order, so before the requests they answer. */
async function serveFromParent(): Promise<void> {
  const server = await startFakeModelServer();
  process.on('message', (m) => {
    server.enqueue(...(m as { turns: FakeTurn[] }).turns);
    process.send!({ ok: true });
  });
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
  process.send!({ url: server.url });
}

// The runner (scripts/bench.mjs) runs from the repository's root; this file runs bundled elsewhere.
const ROOT = process.cwd();

/** Builds the worker bundle as scripts/build.mjs does (minified, with core.js beside it, and cli.js for the big-answer phase); returns its folder. */
async function workerBundle(): Promise<string> {
  const out = join(ROOT, '.cache/bench/pool-worker');
  mkdirSync(out, { recursive: true });
  const options = { bundle: true, minify: true, legalComments: 'none' as const, platform: 'node' as const, format: 'cjs' as const, target: 'node20', logLevel: 'warning' as const };
  await buildWorker(esbuild, options, out, 'src/cli/workerEntry.ts');
  await esbuild.build({ ...options, entryPoints: { cli: join(ROOT, 'src/cli/main.ts') }, outdir: out, banner: { js: '#!/usr/bin/env node' } });
  for (const [pkg, file] of [['web-tree-sitter', 'web-tree-sitter.wasm'], ['tree-sitter-bash', 'tree-sitter-bash.wasm']] as const) {
    const p = join(ROOT, 'node_modules', pkg, file);
    if (existsSync(p)) copyFileSync(p, join(out, file));
  }
  return out;
}

const provider = (server: FakeModelServer) => ({ provider: 'anthropic' as const, model: 'claude-bench', baseUrl: server.url, apiKey: 'sk-bench' });

function runtime(workerDir: string | null, workspace: string, max = 4): TaskRuntime {
  return new TaskRuntime({ workspace, ...(workerDir ? { workers: { command: workerCommandBeside(workerDir, join), max } } : {}) });
}

/** Ms from `start` to the task's first streamed text. */
function firstText(task: TaskHandle, started: number): Promise<number> {
  return new Promise((res) => {
    const off = task.subscribe((e) => {
      if (e.type !== 'text') return;
      off();
      res(performance.now() - started);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A process's proportional set size (`Pss` of /proc/PID/smaps_rollup: its private pages plus its
 * share of pages mapped by several processes, such as the \`node\` binary's); 0 where unreadable.
 */
function pssBytes(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function dispatch(workerDir: string, server: FakeModelServer, workspace: string): Promise<{ cold: number; warm: number; rssMb: number; pssMb: number; freshRssMb: number }> {
  const colds: number[] = [];
  const warms: number[] = [];
  let rss = 0;
  let pss = 0;
  let fresh = 0;
  for (let round = 0; round < 3; round++) {
    // A fresh worker's memory: one that has just said `ready` (the lease resolves then), before any query.
    const probe = runtime(workerDir, workspace, 1);
    (await probe.workerPool()!.acquire('fresh-probe')).release();
    const probed = await probe.workerPool()!.refreshHealth(2000);
    fresh = Math.max(fresh, ...probed.workers.map((w) => w.rssBytes ?? 0));
    probe.dispose();
    await probe.shutdownWorkers();
    const rt = runtime(workerDir, workspace, 1);
    await server.enqueue(...Array.from({ length: 6 }, (): FakeTurn => ({ blocks: [{ type: 'text', text: 'ok' }] })));
    let t0 = performance.now();
    const task = rt.startTask({ prompt: 'hi', provider: provider(server), mode: 'bypassPermissions' });
    colds.push(await firstText(task, t0));
    await task.settled();
    for (let i = 0; i < 5; i++) {
      t0 = performance.now();
      const next = firstText(task, t0);
      task.sendUserMessage('again');
      warms.push(await next);
      await task.settled();
    }
    const status = await rt.workerPool()!.refreshHealth(2000);
    rss = Math.max(rss, ...status.workers.map((w) => w.rssBytes ?? 0));
    pss = Math.max(pss, ...status.workers.map((w) => (w.pid === null ? 0 : pssBytes(w.pid))));
    rt.dispose();
    await rt.shutdownWorkers();
  }
  return { cold: median(colds), warm: median(warms), rssMb: rss / (1024 * 1024), pssMb: pss / (1024 * 1024), freshRssMb: fresh / (1024 * 1024) };
}

/** Idle time the event-loop histogram gets before the measured workload (see hostBlock). */
const HISTOGRAM_PRIME_MS = 25;

async function hostBlock(workerDir: string | null, server: FakeModelServer, workspace: string): Promise<number> {
  const long = 'The agent streams a long answer in small chunks while other tasks run commands. '.repeat(420); // ~8k tokens
  const turns: FakeTurn[] = [];
  for (let i = 0; i < 4; i++) turns.push({ blocks: [{ type: 'text', text: long }, { type: 'tool_use', name: 'Bash', input: { command: 'ls -la / > /dev/null; echo ran' } }], chunkSize: 4 });
  for (let i = 0; i < 4; i++) turns.push({ blocks: [{ type: 'text', text: 'Done.' }] });
  await server.enqueue(...turns);
  const rt = runtime(workerDir, workspace, 4);
  // The previous phase's garbage (an in-host run retains every event it streamed) is collected
  // now, not counted as this phase's block (runner: node --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  // The histogram measures a delay only against a sample it has already taken: a turn that
  // starts right after `enable()` is not seen (a 100 ms busy loop there read 5 ms). Idle first,
  // so the turn that starts the four tasks (the pool creating four workers) is counted.
  await new Promise((r) => setTimeout(r, HISTOGRAM_PRIME_MS));
  const tasks = Array.from({ length: 4 }, (_, i) => rt.startTask({ prompt: `task ${i}`, provider: provider(server), mode: 'bypassPermissions' }));
  const done = await Promise.all(tasks.map((t) => t.settled()));
  h.disable();
  if (done.some((d) => d.status !== 'completed')) throw new Error(`a task did not complete: ${done.map((d) => d.status).join(', ')}`);
  rt.dispose();
  await rt.shutdownWorkers();
  return h.max / 1e6;
}

/** A long read-only pipeline chain: its permission analysis is CPU work, its run is cheap (the first grep fails, && stops). */
const LONG_COMMAND = Array.from({ length: 300 }, (_, i) => `grep -n needle${i} missing/file${i}.ts | head -3`).join(' && ');
const CPU_TURNS = 6;

/** Ms for 4 tasks of CPU_TURNS long-command calls each to settle on a pool of `max` workers, and the largest worker RSS after. */
async function cpuBound(workerDir: string, server: FakeModelServer, workspace: string, max: number): Promise<{ ms: number; rssMb: number }> {
  const turns: FakeTurn[] = [];
  for (let t = 0; t < 4; t++) {
    // Each task's requests carry its prompt: `when` routes its turns to it whatever the interleaving.
    for (let k = 0; k < CPU_TURNS; k++) turns.push({ when: `cpu-task-${t} `, blocks: [{ type: 'tool_use', name: 'Bash', input: { command: LONG_COMMAND } }] });
    turns.push({ when: `cpu-task-${t} `, blocks: [{ type: 'text', text: 'Analysed.' }] });
  }
  await server.enqueue(...turns);
  const rt = runtime(workerDir, workspace, max);
  const t0 = performance.now();
  // Default mode: every call is analysed; what would ask is denied (no one to ask), analysed all the same.
  const tasks = Array.from({ length: 4 }, (_, t) => rt.startTask({ prompt: `cpu-task-${t} analyse`, provider: provider(server), mode: 'default' }));
  const done = await Promise.all(tasks.map((t) => t.settled()));
  const ms = performance.now() - t0;
  // Workers that have analysed commands hold the permission engine and tree-sitter's wasm.
  const status = await rt.workerPool()!.refreshHealth(2000);
  const rssMb = Math.max(...status.workers.map((w) => w.rssBytes ?? 0)) / (1024 * 1024);
  rt.dispose();
  await rt.shutdownWorkers();
  if (done.some((d) => d.status !== 'completed')) throw new Error(`a CPU-bound task did not complete: ${done.map((d) => d.status).join(', ')}`);
  return { ms, rssMb };
}

async function main() {
  const workerDir = await workerBundle();
  const workspace = mkdtempSync(join(tmpdir(), 'keel-bench-pool-'));
  const server = await serverProcess();
  try {
    if (process.env.KEEL_POOL_BENCH === 'big') {
      process.stdout.write(`${JSON.stringify({ ...(await bigAnswer(join(workerDir, 'cli.js'), server)), load: loadavg().map((l) => Number(l.toFixed(2))), cores: availableParallelism(), node: process.version })}\n`);
      return;
    }
    const d = await dispatch(workerDir, server, workspace);
    // In-host first, then with workers; each twice, the better (lower) of each kept.
    const inHost = Math.min(await hostBlock(null, server, workspace), await hostBlock(null, server, workspace));
    const withWorkers = Math.min(await hostBlock(workerDir, server, workspace), await hostBlock(workerDir, server, workspace));
    // Warm-up (the first parse loads tree-sitter's wasm in each worker), then 1 worker, then 4.
    await cpuBound(workerDir, server, workspace, 4);
    const one = await cpuBound(workerDir, server, workspace, 1);
    const four = await cpuBound(workerDir, server, workspace, 4);
    const oneWorker = one.ms;
    const fourWorkers = four.ms;
    const big = await bigAnswer(join(workerDir, 'cli.js'), server);
    const result = {
      warm_vs_cold_dispatch_ratio: Number((d.cold / d.warm).toFixed(1)),
      cold_dispatch_ms: Number(d.cold.toFixed(1)),
      warm_dispatch_ms: Number(d.warm.toFixed(1)),
      idle_worker_rss_mb: Number(d.rssMb.toFixed(1)),
      idle_worker_pss_mb: Number(d.pssMb.toFixed(1)),
      fresh_worker_rss_mb: Number(d.freshRssMb.toFixed(1)),
      analysing_worker_rss_mb: Number(one.rssMb.toFixed(1)),
      host_max_event_loop_block_ms: Number(withWorkers.toFixed(1)),
      in_host_max_event_loop_block_ms: Number(inHost.toFixed(1)),
      host_block_ratio_vs_in_host: Number((withWorkers / inHost).toFixed(2)),
      parallel_speedup_4_workers: Number((oneWorker / fourWorkers).toFixed(2)),
      cpu_bound_1_worker_ms: Math.round(oneWorker),
      cpu_bound_4_workers_ms: Math.round(fourWorkers),
      ...big,
      load: loadavg().map((l) => Number(l.toFixed(2))),
      cores: availableParallelism(),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await server.close();
  }
}
void (process.env.KEEL_BENCH_ROLE === 'server' ? serveFromParent() : main()).catch((err: unknown) => {
  process.stderr.write(`pool bench: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
