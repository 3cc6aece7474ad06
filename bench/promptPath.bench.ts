// How many of our source files a prompt from the composer crosses (issue 25: "a prompt crosses
// ~30 files"), counted, not guessed: the files with at least one function that ran while the
// chat handled one prompt, from the page's `prompt` message to the task's `done`.
//  - The host side: the extension's chat (ChatWindow, ChatController, ViewConnection: the code
//    VS Code runs, with test fakes for the workbench) over a real TaskRuntime with the default
//    worker pool, the real Anthropic provider and the fake model server. It runs in a child
//    process of its own, bundled with a source map; V8's coverage (NODE_V8_COVERAGE,
//    `v8.takeCoverage()` resetting the counts) is taken around the second prompt of a task, so
//    loading the runtime and starting the pool (first prompt) are not counted.
//  - The worker side: the worker bundle (dist/worker.js as scripts/build.mjs builds it, with a
//    source map), coverage taken the same way (a preload resets it on SIGUSR2 after the first
//    prompt; the rest is written when the worker exits).
//  - `in_process_files`: the same second prompt with `workers: 0` (the runtime runs the turn).
// A file counts when any of its functions was called (module bodies run at load do not: each is
// one function per bundle). Prints one JSON line, with the files of each side.
//
// Coverage counts every file that ran while the prompt was handled — the event bus, the recorder,
// the webview's transcript, the SDK's helpers' callers — which is not what the review traced by
// hand (~30 files a prompt passes through). `stack_*` counts the other way (a floor): the files holding a
// frame on the prompt's path, from stack traces (V8's async stack traces on, no depth limit)
// captured where the prompt is handed along — the host's task taking the message
// (LiveTask.sendUserMessage, its caller chain from the page's message), the host writing the
// query to its worker (a stream write carrying the prompt), the worker parsing the query (the
// JSON.parse of a text carrying it) and the provider request (`fetch` with the prompt in its
// body; in the host with workers 0) — mapped through the bundles' source maps, unioned per
// process. A hop through an event queue (xstate's mailbox, a socket) starts a new stack, which is
// why each side is probed where it hands the prompt on.
// `causal_*` follows the prompt across every hop instead (bench/promptPathCausal.ts, in runs of
// their own, both processes): its handling is an async context marked at the host's receipt of
// the page's message and, in either process, where a message the other sent from a marked
// context is parsed; every async resource created in a marked context is marked (async_hooks).
// `causal_callers_*`: the files with a frame on the stack at each such creation (its synchronous
// callers); `causal_*`: those and the files of every function called while a marked context ran
// (V8's call counts, taken at each switch between marked and unmarked work). Work not caused by
// the prompt (other contexts: the pool's timers, the first prompt's leftovers) is left out. See
// docs/benchmarks.md for what it cannot see.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

// The repository (scripts/bench.mjs runs benches from it).
const ROOT = process.env.KEEL_BENCH_ROOT ?? process.cwd();

if (process.env.KEEL_BENCH_ROLE === 'driver') void driver();
else void main();

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-prompt-path-'));
  // Loaded here: the driver (this bundle again, in a child) never needs it.
  const { build } = await import('esbuild');
  await build({
    entryPoints: { driver: join(ROOT, 'bench/promptPath.bench.ts'), worker: join(ROOT, 'src/cli/workerEntry.ts'), causal: join(ROOT, 'bench/promptPathCausal.ts') },
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'external',
    sourcesContent: false,
    logLevel: 'warning',
    external: ['esbuild'],
  });
  for (const [pkg, file] of [['web-tree-sitter', 'web-tree-sitter.wasm'], ['tree-sitter-bash', 'tree-sitter-bash.wasm']] as const) {
    writeFileSync(join(dir, file), readFileSync(join(ROOT, 'node_modules', pkg, file)));
  }
  const result: Record<string, unknown> = {};
  for (const workers of [1, 0]) {
    const cov = mkdtempSync(join(tmpdir(), 'keel-prompt-cov-'));
    execFileSync(process.execPath, [join(dir, 'driver.js')], { env: { ...process.env, KEEL_BENCH_ROLE: 'driver', KEEL_BENCH_ROOT: ROOT, KEEL_BENCH_DIR: dir, KEEL_BENCH_WORKERS: String(workers), NODE_V8_COVERAGE: cov }, stdio: ['ignore', 'inherit', 'inherit'] });
    const byPid = new Map<string, string[]>();
    for (const f of readdirSync(cov).sort()) {
      const pid = /^coverage-(\d+)-/.exec(f)?.[1];
      if (pid) byPid.set(pid, [...(byPid.get(pid) ?? []), f]);
    }
    // The driver's second file (its first reset comes after the first prompt, its second after the
    // second prompt); the worker's last (the reset after the first prompt, then its exit).
    const sides = [...byPid.values()].map((files) => {
      const side = filesRun(join(cov, files[0]!), dir);
      return side.bundle === 'driver.js' ? filesRun(join(cov, files[1]!), dir) : filesRun(join(cov, files.at(-1)!), dir);
    });
    const host = sides.find((s) => s.bundle === 'driver.js')?.files ?? [];
    const worker = sides.find((s) => s.bundle === 'worker.js')?.files ?? [];
    const stacks = stackFiles(cov, dir);
    // The causal trace in a run of its own (its call counts would reset the coverage's).
    const out = mkdtempSync(join(tmpdir(), 'keel-prompt-causal-'));
    execFileSync(process.execPath, [join(dir, 'driver.js')], { env: { ...process.env, KEEL_BENCH_ROLE: 'driver', KEEL_BENCH_ROOT: ROOT, KEEL_BENCH_DIR: dir, KEEL_BENCH_WORKERS: String(workers), KEEL_BENCH_CAUSAL: out }, stdio: ['ignore', 'inherit', 'inherit'] });
    const causal = causalFiles(out, dir);
    for (const d of [cov, out]) rmSync(d, { recursive: true, force: true });
    const causalHost = causal.all.get('driver.js') ?? [];
    const causalWorker = causal.all.get('worker.js') ?? [];
    const callersHost = causal.callers.get('driver.js') ?? [];
    const callersWorker = causal.callers.get('worker.js') ?? [];
    const stackHost = stacks.get('driver.js') ?? [];
    const stackWorker = stacks.get('worker.js') ?? [];
    if (workers > 0) {
      const all = new Set([...host, ...worker]);
      const onPath = new Set([...stackHost, ...stackWorker]);
      Object.assign(result, {
        files_crossed: all.size,
        host_files: host.length,
        worker_files: worker.length,
        stack_files_on_path: onPath.size,
        causal_files_on_path: new Set([...causalHost, ...causalWorker]).size,
        causal_host_files: causalHost.length,
        causal_worker_files: causalWorker.length,
        causal_callers_files_on_path: new Set([...callersHost, ...callersWorker]).size,
        causal_callers_host_files: callersHost.length,
        causal_callers_worker_files: callersWorker.length,
        stack_host_files: stackHost.length,
        stack_worker_files: stackWorker.length,
        host,
        worker,
        stack_host: stackHost,
        stack_worker: stackWorker,
        causal_host: causalHost,
        causal_worker: causalWorker,
        causal_callers_host: callersHost,
        causal_callers_worker: callersWorker,
      });
    } else {
      Object.assign(result, {
        in_process_files: host.length,
        stack_in_process_files: stackHost.length,
        causal_in_process_files: causalHost.length,
        causal_callers_in_process_files: callersHost.length,
        in_process: host,
        stack_in_process: stackHost,
        causal_in_process: causalHost,
        causal_callers_in_process: callersHost,
      });
    }
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** The src/ files with a function that ran, in the coverage file of one process of ours. */
function filesRun(coverageFile: string, dir: string): { bundle: string; files: string[] } {
  const data = JSON.parse(readFileSync(coverageFile, 'utf8')) as { result: { url: string; functions: { functionName: string; isBlockCoverage: boolean; ranges: { startOffset: number; count: number }[] }[] }[] };
  for (const script of data.result) {
    const bundle = ['driver.js', 'worker.js'].find((b) => script.url.endsWith(`/${b}`));
    if (!bundle) continue;
    const path = join(dir, bundle);
    const code = readFileSync(path, 'utf8');
    const map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    const lineStarts = lineStartsOf(code);
    const files = new Set<string>();
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      // The bundle's own wrapper (offset 0) is every module body at once.
      if (!range || range.count === 0 || range.startOffset === 0) continue;
      const line = lineAt(lineStarts, range.startOffset);
      const entry = map.findEntry(line, range.startOffset - lineStarts[line]!) as { originalSource?: string };
      const source = entry.originalSource ? relative(ROOT, resolve(dir, entry.originalSource)) : '';
      if (source.startsWith('src/')) files.add(source);
    }
    return { bundle, files: [...files].sort() };
  }
  return { bundle: '', files: [] };
}

/** The offset of each line's start in `code`. */
function lineStartsOf(code: string): number[] {
  const starts = [0];
  for (let i = code.indexOf('\n'); i !== -1; i = code.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The 0-based line holding `offset`. */
function lineAt(starts: number[], offset: number): number {
  let line = 0;
  for (let lo = 0, hi = starts.length - 1; lo <= hi; ) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! <= offset) {
      line = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return line;
}

/** The prompt of the measured (second) run: the probes recognise what carries it. */
const PROBE_PROMPT = 'second prompt (probe 7f3a)';

/**
 * Stack probes for one process, run in it (the driver; a preload in the worker): each probe keeps
 * the stack where the prompt is handed along, written as stacks-<pid>.json in the coverage folder
 * when the process exits.
 */
const PROBES = `
const fs = require('node:fs'), path = require('node:path'), { Writable, Duplex } = require('node:stream');
const PROBE = ${JSON.stringify(PROBE_PROMPT)};
Error.stackTraceLimit = Infinity;
const stacks = [];
globalThis.__keelProbe = (point, file) => stacks.push({ point, stack: new Error(point).stack, file });
const carries = (v) => { try { return typeof v === 'string' ? v.includes(PROBE) : Buffer.isBuffer(v) ? v.includes(PROBE) : false; } catch { return false; } };
// Duplex has its own copy of Writable's write (node:stream copies the methods): both are probed.
for (const proto of [Writable.prototype, Duplex.prototype]) {
  const write = proto.write;
  proto.write = function (chunk, ...rest) { if (carries(chunk)) globalThis.__keelProbe('stream write'); return write.call(this, chunk, ...rest); };
}
const parse = JSON.parse;
JSON.parse = function (text, reviver) { if (carries(text)) globalThis.__keelProbe('JSON.parse'); return parse.call(this, text, reviver); };
const fetch0 = globalThis.fetch;
globalThis.fetch = function (input, init) { if (init && carries(init.body)) globalThis.__keelProbe('fetch'); return fetch0.call(this, input, init); };
process.on('exit', () => fs.writeFileSync(path.join(process.env.NODE_V8_COVERAGE, 'stacks-' + process.pid + '.json'), JSON.stringify(stacks)));
`;

/** The src/ files with a frame on the probes' stacks, per bundle (driver.js: the host; worker.js). */
function stackFiles(cov: string, dir: string): Map<string, string[]> {
  const maps = new Map<string, SourceMap>();
  const out = new Map<string, Set<string>>();
  for (const f of readdirSync(cov).filter((n) => n.startsWith('stacks-'))) {
    const stacks = JSON.parse(readFileSync(join(cov, f), 'utf8')) as { point: string; stack: string; file?: string }[];
    for (const { stack, file } of stacks) {
      if (file) out.set('driver.js', (out.get('driver.js') ?? new Set()).add(file));
      for (const line of stack.split('\n')) {
        const m = /\(?([^()\s]+\.js):(\d+):(\d+)\)?$/.exec(line.trim());
        const bundle = m && ['driver.js', 'worker.js'].find((b) => m[1]!.endsWith(`/${b}`));
        if (!m || !bundle) continue;
        const source = sourceOf(maps, dir, bundle, Number(m[2]), Number(m[3]));
        if (!source.startsWith('src/')) continue;
        if (!out.has(bundle)) out.set(bundle, new Set());
        out.get(bundle)!.add(source);
      }
    }
  }
  return new Map([...out].map(([b, files]) => [b, [...files].sort()]));
}

/** The file (relative to the repository) of a frame at 1-based `line`:`column` of a bundle. */
function sourceOf(maps: Map<string, SourceMap>, dir: string, bundle: string, line: number, column: number): string {
  let map = maps.get(bundle);
  if (!map) maps.set(bundle, (map = new SourceMap(JSON.parse(readFileSync(join(dir, `${bundle}.map`), 'utf8')))));
  const entry = map.findEntry(line - 1, column - 1) as { originalSource?: string };
  return entry.originalSource ? relative(ROOT, resolve(dir, entry.originalSource)) : '';
}

/**
 * The src/ files of the causal trace (bench/promptPathCausal.ts), per bundle: `callers`, those
 * with a frame on a stack kept where the prompt's contexts created work; `all`, those and the
 * files of the functions called while a marked context ran.
 */
function causalFiles(cov: string, dir: string): { all: Map<string, string[]>; callers: Map<string, string[]> } {
  const maps = new Map<string, SourceMap>();
  const all = new Map<string, Set<string>>();
  const callers = new Map<string, Set<string>>();
  const lineStarts = new Map<string, number[]>();
  const add = (bundle: string, source: string, caller: boolean) => {
    if (!source.startsWith('src/')) return;
    all.set(bundle, (all.get(bundle) ?? new Set()).add(source));
    if (caller) callers.set(bundle, (callers.get(bundle) ?? new Set()).add(source));
  };
  for (const f of readdirSync(cov).filter((n) => n.startsWith('causal-'))) {
    const { frames, ran } = JSON.parse(readFileSync(join(cov, f), 'utf8')) as { frames: string[]; ran: string[] };
    for (const frame of frames) {
      const m = /^(.+\.js):(\d+):(\d+)$/.exec(frame);
      const bundle = m && ['driver.js', 'worker.js'].find((b) => m[1]!.endsWith(`/${b}`));
      if (m && bundle) add(bundle, sourceOf(maps, dir, bundle, Number(m[2]), Number(m[3])), true);
    }
    // The functions called while marked: "<url> <offset>"; offset 0 is the bundle's wrapper.
    for (const fn of ran) {
      const [url, at] = fn.split(' ');
      const bundle = ['driver.js', 'worker.js'].find((b) => url!.endsWith(`/${b}`));
      const offset = Number(at);
      if (!bundle || offset === 0) continue;
      let starts = lineStarts.get(bundle);
      if (!starts) lineStarts.set(bundle, (starts = lineStartsOf(readFileSync(join(dir, bundle), 'utf8'))));
      const line = lineAt(starts, offset);
      add(bundle, sourceOf(maps, dir, bundle, line + 1, offset - starts[line]! + 1), false);
    }
  }
  const sorted = (m: Map<string, Set<string>>) => new Map([...m].map(([b, files]) => [b, [...files].sort()]));
  return { all: sorted(all), callers: sorted(callers) };
}

/** The child process: one chat, one task, two prompts; coverage reset between them. */
async function driver(): Promise<void> {
  const v8 = await import('node:v8');
  const { TaskRuntime } = await import('../src/core/runtime/taskRuntime');
  const { ChatController, ChatWindow } = await import('../src/extension/chatController');
  const { ViewConnection } = await import('../src/extension/viewConnection');
  const { memoryHistoryServices } = await import('../src/extension/history/taskHistory');
  const { fakeHost, recordingPort } = await import('../test/unit/extension/fakes');
  const { startFakeModelServer } = await import('../test/fixtures/fake-model-server');
  const dir = process.env.KEEL_BENCH_DIR!;
  const workers = Number(process.env.KEEL_BENCH_WORKERS);
  const preload = join(dir, 'reset.js');
  // Either a coverage run (coverage and stack probes) or a causal run (the causal trace alone).
  const causalOut = process.env.KEEL_BENCH_CAUSAL;
  const out = causalOut ?? process.env.NODE_V8_COVERAGE!;
  const causalOpts = { outDir: out, shared: join(out, 'hashes-shared.txt'), probe: PROBE_PROMPT };
  // The worker's first SIGUSR2 (after the first prompt) resets its coverage, or starts its causal
  // trace (and says so: started-<pid>); the second (the second prompt done) writes the trace.
  writeFileSync(
    preload,
    causalOut
      ? `const trace = require(${JSON.stringify(join(dir, 'causal.js'))}).installCausalTrace(${JSON.stringify(causalOpts)});
let usr2 = 0;
process.on('SIGUSR2', () => { if (usr2++ === 0) { trace.start(); require('node:fs').writeFileSync(${JSON.stringify(out)} + '/started-' + process.pid, ''); } else trace.stop(); });\n`
      : `process.on('SIGUSR2', () => require('node:v8').takeCoverage());\n${PROBES}`,
  );
  const { installCausalTrace } = await import('./promptPathCausal');
  const trace = causalOut ? installCausalTrace(causalOpts) : undefined;
  // The same probes in this process (the host), and the host's task taking the message.
  if (!causalOut) new Function('require', PROBES)(require);
  const { LiveTask } = await import('../src/core/runtime/liveTask');
  const { ActivityFeed } = await import('../src/core/events/activityFeed');
  const send = LiveTask.prototype.sendUserMessage;
  LiveTask.prototype.sendUserMessage = function (this: InstanceType<typeof LiveTask>, text: string) {
    // The probed method's own file holds a frame on the path too (the probe runs in its stead).
    if (text.includes(PROBE_PROMPT)) (globalThis as { __keelProbe?: (p: string, file?: string) => void }).__keelProbe?.('sendUserMessage', 'src/core/runtime/liveTask.ts');
    return send.call(this, text);
  };
  const server = await startFakeModelServer();
  server.enqueue({ blocks: [{ type: 'text', text: 'The first answer.' }] }, { blocks: [{ type: 'text', text: 'The second answer, in a few words.' }] });
  const workspace = mkdtempSync(join(tmpdir(), 'keel-prompt-ws-'));
  const storage = mkdtempSync(join(tmpdir(), 'keel-prompt-store-'));
  const h = fakeHost({ provider: { provider: 'anthropic', model: 'claude-test', apiKey: 'sk-bench', baseUrl: server.url } });
  let runtime: InstanceType<typeof TaskRuntime> | undefined;
  const window = new ChatWindow({
    ...h.host,
    loadRuntime: async (asker) =>
      (runtime = new TaskRuntime({
        workspace,
        storageDir: storage,
        asker,
        // As the extension runs it (runtimeHost.ts): the views follow the task through the event bus.
        feed: new ActivityFeed(() => undefined),
        ...(workers > 0 ? { workers: { max: 4, command: { command: process.execPath, args: ['--require', preload, join(dir, 'worker.js')] } } } : {}),
      })),
    history: memoryHistoryServices(),
    permissionMode: () => 'default',
  });
  const chat = new ChatController(window, { id: 'sidebar' });
  const port = recordingPort();
  const conn = new ViewConnection('sidebar-1', 'sidebar', port.post, h.log);
  chat.attach(conn);
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await chat.handle(conn, m);
  };
  await fromPage({ type: 'ready' });
  await fromPage({ type: 'prompt', text: 'first' });
  const task = chat.shownTask()!;
  await task.settled();
  // Both processes' counts start again here.
  const pid = runtime?.workerPool()?.status().workers[0]?.pid;
  if (pid) {
    // Its answer: a new coverage file, or started-<pid>.
    const answers = (): number => readdirSync(out).filter((f) => f.startsWith(causalOut ? `started-${pid}` : `coverage-${pid}-`)).length;
    const before = answers();
    process.kill(pid, 'SIGUSR2');
    while (answers() === before) await new Promise((r) => setTimeout(r, 20));
  }
  if (!causalOut) v8.takeCoverage();
  const second = new Promise<void>((resolveDone) => task.subscribe((e) => e.type === 'done' && resolveDone()));
  if (trace) {
    trace.start();
    await trace.runMarked(() => fromPage({ type: 'prompt', text: PROBE_PROMPT }));
  } else await fromPage({ type: 'prompt', text: PROBE_PROMPT });
  await second;
  if (!trace) v8.takeCoverage();
  else {
    // What the prompt's contexts still do after its `done` (the worker going idle, the record's
    // last write) is theirs too: a short quiet time, then both traces stop.
    await new Promise((r) => setTimeout(r, 250));
    trace.stop();
    if (pid) {
      process.kill(pid, 'SIGUSR2');
      while (!readdirSync(out).includes(`causal-${pid}.json`)) await new Promise((r) => setTimeout(r, 20));
    }
  }
  // The worker writes its coverage when it exits: let it stop on its own.
  await runtime?.shutdownWorkers();
  window.dispose();
  await server.close();
  for (const d of [workspace, storage]) rmSync(d, { recursive: true, force: true });
  process.exit(0);
}
