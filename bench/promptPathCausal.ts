// The causal trace of bench/promptPath.bench.ts, run inside each measured process (the host: the
// driver bundle imports it; the worker: a preload requires its own bundle). It follows the
// prompt's handling as an async context, the way AsyncLocalStorage propagates a store:
//  - a context is marked where the prompt arrives: the host's receipt of the page's `prompt`
//    message (`runMarked`), and, in either process, the rest of a tick that parses a message the
//    other process serialized inside a marked context (the query to the worker, the worker's
//    events and asks back to the host) or a text carrying the prompt;
//  - every async resource (promise, timer, socket, immediate, …) created while the current
//    context is marked is marked too, so its callbacks run marked;
//  - at each such creation, and at each mark, the stack is kept (async stack traces on, no depth
//    limit): its frames are the synchronous callers of that work. The frames' positions in the
//    bundles are written to causal-<pid>.json; the bench maps them through the source maps.
// Cross-process: JSON.stringify inside a marked context appends "<pid> <sha1>" of its text to a
// file both processes share; a JSON.parse (in the other process) of a text with that hash marks
// the rest of its tick. The channel between host and worker is one JSON text per message
// (src/core/workers/channel.ts), so this is the message boundary.
import { AsyncResource, createHook, executionAsyncId, executionAsyncResource } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

export interface CausalTrace {
  /** Runs `fn` in a new marked context (the host's receipt of the prompt). */
  runMarked<T>(fn: () => T): T;
  /** Starts keeping what marked contexts create (off at install). */
  start(): void;
  /** Stops, and writes causal-<pid>.json in `outDir`. */
  stop(): void;
}

/** One kept frame: the script's URL or path, its 1-based line and column (as V8 prints them). */
type Frame = string;

/**
 * Installs the trace in this process. `shared` is the file of hashes both processes append to;
 * `probe` a text that, found in a parsed JSON text, marks its tick too (the prompt itself).
 */
export function installCausalTrace(opts: { outDir: string; shared: string; probe: string }): CausalTrace {
  Error.stackTraceLimit = Infinity;
  const marked = new WeakSet<object>();
  const frames = new Set<Frame>();
  const marks: { why: string; at: number }[] = [];
  let recording = false;
  // The tick (async id) whose rest is marked by a parse, until its `after`.
  let tickMarked = -1;
  let resources = 0;
  const otherHashes = new Set<string>();
  let sharedRead = 0;
  const pid = String(process.pid);

  // The functions called while a marked context runs (synchronous work that leaves no frame on
  // a later stack: a helper called and returned before the next resource is made). V8's precise
  // call counts, taken (and reset) each time the running context changes from marked to not or
  // back, through this thread's own inspector session (its `post` answers synchronously). It
  // resets the counts NODE_V8_COVERAGE uses, so the bench runs this trace in runs of its own.
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  /** "<script url> <function start offset>" of the functions called while marked. */
  const ran = new Set<string>();
  let state = false;
  const states: boolean[] = [];
  let takes = 0;
  const take = (): void => {
    takes++;
    const wasMarked = state;
    session.post('Profiler.takePreciseCoverage', (err, res) => {
      if (err || !wasMarked) return;
      for (const script of res.result) {
        if (!script.url.endsWith('.js')) continue;
        for (const fn of script.functions) {
          const range = fn.ranges[0];
          if (range && range.count > 0) ran.add(`${script.url} ${range.startOffset}`);
        }
      }
    });
  };
  const enter = (now: boolean): void => {
    if (now !== state) {
      take();
      state = now;
    }
  };

  const inMarked = (): boolean => {
    if (tickMarked !== -1 && executionAsyncId() === tickMarked) return true;
    const r = executionAsyncResource();
    return typeof r === 'object' && r !== null && marked.has(r);
  };
  const keepStack = (): void => {
    const stack = new Error('causal').stack ?? '';
    for (const line of stack.split('\n')) {
      const m = /\(?([^()\s]+\.js):(\d+):(\d+)\)?$/.exec(line.trim());
      if (m) frames.add(`${m[1]}:${m[2]}:${m[3]}`);
    }
  };
  const markTick = (why: string): void => {
    if (inMarked()) return;
    marks.push({ why, at: Date.now() });
    tickMarked = executionAsyncId();
    enter(true);
    keepStack();
  };

  createHook({
    init(_id, _type, _trigger, resource) {
      if (!recording || !inMarked()) return;
      // A resource object is what executionAsyncResource() returns while its callbacks run.
      if (typeof resource === 'object' && resource !== null) marked.add(resource);
      resources++;
      keepStack();
    },
    before() {
      states.push(state);
      enter(recording && inMarked());
    },
    after(id) {
      if (id === tickMarked) tickMarked = -1;
      enter(states.pop() ?? false);
    },
  }).enable();

  const stringify = JSON.stringify;
  JSON.stringify = function (this: unknown, ...args: Parameters<typeof JSON.stringify>): string {
    const text = stringify.apply(this, args);
    if (recording && typeof text === 'string' && text.startsWith('{') && inMarked()) {
      appendFileSync(opts.shared, `${pid} ${createHash('sha1').update(text).digest('hex')}\n`);
    }
    return text;
  } as typeof JSON.stringify;
  const parse = JSON.parse;
  JSON.parse = function (this: unknown, text: string, reviver?: Parameters<typeof JSON.parse>[1]): unknown {
    if (recording && typeof text === 'string') {
      if (text.includes(opts.probe)) markTick('a text carrying the prompt parsed');
      else if (text.startsWith('{')) {
        const hash = createHash('sha1').update(text).digest('hex');
        if (!otherHashes.has(hash)) readShared();
        if (otherHashes.has(hash)) markTick('a message the other process sent from the prompt parsed');
      }
    }
    return parse.call(this, text, reviver) as unknown;
  };
  const readShared = (): void => {
    let all: string;
    try {
      all = readFileSync(opts.shared, 'utf8');
    } catch {
      return;
    }
    for (const line of all.slice(sharedRead).split('\n')) {
      const [from, hash] = line.split(' ');
      if (hash && from !== pid) otherHashes.add(hash);
    }
    sharedRead = all.lastIndexOf('\n') + 1;
  };

  return {
    runMarked<T>(fn: () => T): T {
      const scope = new AsyncResource('KeelPromptReceipt');
      marked.add(scope);
      return scope.runInAsyncScope(() => {
        const outer = state;
        if (recording) {
          marks.push({ why: "the page's prompt message received", at: Date.now() });
          keepStack();
          enter(true);
        }
        try {
          return fn();
        } finally {
          enter(outer);
        }
      });
    },
    start() {
      recording = true;
    },
    stop() {
      enter(false);
      recording = false;
      writeFileSync(join(opts.outDir, `causal-${pid}.json`), stringify({ pid, resources, takes, marks, frames: [...frames], ran: [...ran] }));
    },
  };
}
