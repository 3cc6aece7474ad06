// Checkpoints (src/core/checkpoints, docs/persistence.md "Checkpoints"): what they cost in bytes
// and in time, measured with the real parts — the Edit and Write tools, the checkpoint store on a
// real disk (os.tmpdir(), fdatasync included), the task runtime and its log.
//  (a) checkpoint_bytes_ratio: 1,000 Edits of one 1 MB file of real source code (this repository's
//      src/ and webview/ files, concatenated in a fixed order, cut at 1 MiB), each replacing about
//      100 bytes somewhere in it with a new line of code: the bytes the task's checkpoints folder
//      holds afterwards (apparent size; `disk_bytes` also prints what the file system allocated)
//      over the bytes those edits changed (for each, the longer of the text replaced and the text
//      put in). The first before-image is the whole file (compressed): `first_copy_bytes` as
//      stored before the write (Brotli q4), `first_copy_bytes_recompacted` once the background
//      recompaction (src/core/checkpoints/recompact.ts) rewrote it at q11; the others are
//      splices or deltas against the version before: `per_edit_bytes`. The folder is measured
//      after that recompaction is done (the bench waits for it, and prints how long it waited,
//      `waited_for_recompaction_ms`, and how long it took, `recompaction_ms`): a user's folder
//      left alone gets there the same way. The workspace is a plain folder (no git): every
//      before-image is in the checkpoints.
//  (a') checkpoint_bytes_ratio_git_repo: the same 1,000 Edits with the file committed in a git
//      repository (the usual case): its first before-image is git's blob, kept as a reference
//      (src/core/checkpoints/gitObjects.ts), not copied. The repository's own bytes are not
//      counted: they were there before the task and stay after it.
//  (b) checkpoint_overhead_ratio: a tool round — the model answers with a Write of a 100 KB file
//      (over an existing 100 KB file of other content: no delta helps), the permission check, the
//      log made durable, the tool, the result, the next request — with checkpoints against the
//      same round without (`checkpoints: false`), each a task of 10 rounds on a recorded runtime,
//      side by side in alternating pairs; the median of the per-pair ratios. The whole path: the
//      real Anthropic provider streams each answer over loopback SSE from the fake model server,
//      the Write's content in 256-character deltas (`sse_chunk_chars`; the API sends smaller ones,
//      so a real round is longer and its ratio lower). `…_in_memory`: the same rounds with each
//      answer handed to the task whole, in one event (only Keel's own work: the strictest figure).
//  (c) rewind_ms_100_files: one answer with 100 Writes (each file 4–8 KB of source), then a
//      preview (`previewRewind`) and a rewind of the files (`rewindTask`, files only) back to
//      before the first: the wall time of both, median of 3.
// Prints one JSON line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskCheckpoints } from '../src/core/checkpoints/recorder';
import { previewRewind, rewindTask } from '../src/core/checkpoints/rewinder';
import { LockManager } from '../src/core/locks/lockManager';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../src/core/providers/types';
import { TaskRuntime } from '../src/core/runtime/taskRuntime';
import { TaskStore } from '../src/core/store/taskStore';
import { editTool } from '../src/core/tools/edit';
import { startFakeModelServer, type FakeModelServer } from '../test/fixtures/fake-model-server';

const ROOT = join(__dirname, '..', '..');

/** This repository's sources, concatenated in a fixed order: real code, compressible as code is. */
function sources(): Buffer {
  const out: Buffer[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx)$/.test(name)) out.push(readFileSync(p));
    }
  };
  walk(join(ROOT, 'src'));
  walk(join(ROOT, 'webview'));
  return Buffer.concat(out);
}

const SOURCE = sources();

function dirBytes(dir: string): { bytes: number; disk: number } {
  let bytes = 0;
  let disk = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else {
        bytes += st.size;
        disk += st.blocks * 512;
      }
    }
  };
  walk(dir);
  return { bytes, disk };
}

let seed = 7;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'b@b' };

async function bytesRatio(inGit: boolean) {
  seed = 7;
  const ws = mkdtempSync(join(tmpdir(), 'keel-bench-cp-ws-'));
  const store = mkdtempSync(join(tmpdir(), 'keel-bench-cp-st-'));
  const file = join(ws, 'big.ts');
  let text = SOURCE.subarray(0, 1 << 20).toString('utf8');
  writeFileSync(file, text);
  if (inGit) {
    for (const args of [['init', '-q'], ['add', 'big.ts'], ['commit', '-qm', 'start']]) execFileSync('git', args, { cwd: ws, env: GIT_ENV, stdio: 'ignore' });
  }
  const cps = new TaskCheckpoints({ dir: join(store, 'checkpoints'), workspace: ws });
  const locks = new LockManager();
  let changed = 0;
  let firstCopy = 0;
  const started = performance.now();
  for (let k = 0; k < 1000; k++) {
    // A unique ~100-byte stretch of the file, replaced by a new line of code.
    let at = rand(text.length - 200);
    let old = text.slice(at, at + 100);
    while (text.indexOf(old) !== text.lastIndexOf(old)) {
      at = rand(text.length - 200);
      old = text.slice(at, at + 100);
    }
    const next = `const edited${k} = computeValue(${rand(100000)}, 'step ${k}', options); // changed by edit ${k}\n`.slice(0, 100);
    const ctx = { taskId: 'bench', workspace: ws, signal: new AbortController().signal, locks, onOutput: () => undefined, searchExclusions: async () => null, checkpoints: cps.forCall(`toolu_${k}`) };
    const r = await editTool.invoke({ file_path: file, old_string: old, new_string: next }, ctx);
    if (r.isError) throw new Error(r.content);
    cps.release(`toolu_${k}`);
    changed += Math.max(Buffer.byteLength(old), Buffer.byteLength(next));
    text = text.replace(old, next);
    if (k === 0) firstCopy = dirBytes(join(store, 'checkpoints')).bytes;
  }
  const ms = performance.now() - started;
  // What a user's folder holds once the background recompaction of the first copy is done: the
  // bench waits for it, as a folder left alone gets there by itself.
  const waitStarted = performance.now();
  await cps.recompacted();
  const waitedMs = performance.now() - waitStarted;
  const recompaction = cps.store.recompaction;
  await cps.close();
  const used = dirBytes(join(store, 'checkpoints'));
  rmSync(ws, { recursive: true, force: true });
  rmSync(store, { recursive: true, force: true });
  if (inGit) {
    return {
      checkpoint_bytes_ratio_git_repo: Number((used.bytes / changed).toFixed(2)),
      checkpoint_bytes_git_repo: used.bytes,
      first_copy_bytes_git_repo: firstCopy,
      per_edit_bytes_git_repo: Number(((used.bytes - firstCopy) / 999).toFixed(1)),
      recompacted_git_repo: recompaction.done,
      edits_ms_each_git_repo: Number((ms / 1000).toFixed(2)),
    };
  }
  return {
    checkpoint_bytes_ratio: Number((used.bytes / changed).toFixed(2)),
    checkpoint_bytes: used.bytes,
    disk_bytes: used.disk,
    changed_bytes: changed,
    // As stored before the write it protects (quality 4); `first_copy_bytes_recompacted` is the
    // same copy once the background recompaction rewrote it.
    first_copy_bytes: firstCopy,
    first_copy_bytes_recompacted: firstCopy - recompaction.savedBytes,
    per_edit_bytes: Number(((used.bytes - (firstCopy - recompaction.savedBytes)) / 999).toFixed(1)),
    recompacted: recompaction.done,
    recompaction_ms: Math.round(recompaction.ms),
    waited_for_recompaction_ms: Math.round(waitedMs),
    ratio_without_first_copy: Number(((used.bytes - (firstCopy - recompaction.savedBytes)) / changed).toFixed(2)),
    file_bytes: 1 << 20,
    edits_ms_each: Number((ms / 1000).toFixed(2)),
  };
}

/** A provider that answers from a list (one request, one answer) with the provider grammar. */
class Answers implements ModelProvider {
  readonly id = 'scripted' as const;
  readonly label = 'bench';
  constructor(private readonly next: (req: ProviderRequest, n: number) => ProviderEvent[]) {}
  private n = 0;
  async *stream(req: ProviderRequest): AsyncIterable<ProviderEvent> {
    for (const e of this.next(req, this.n++)) yield e;
  }
}

let msg = 0;
function answer(blocks: ({ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> })[]): ProviderEvent[] {
  const out: ProviderEvent[] = [{ type: 'message_start', message: { id: `msg_${++msg}`, model: 'claude-bench', usage: { input_tokens: 10, output_tokens: 1 } } }];
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } }, { type: 'content_block_stop', index });
    } else {
      out.push(
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } },
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } },
        { type: 'content_block_stop', index },
      );
    }
  });
  const tools = blocks.some((b) => b.type === 'tool_use');
  out.push({ type: 'message_delta', delta: { stop_reason: tools ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 5 } }, { type: 'message_stop' });
  return out;
}

const ROUNDS = 10;
const KB100 = 100 * 1024;

/** Characters per `input_json_delta` of the whole-path rounds: a few dozen tokens per event, coarser than the API's. */
const SSE_CHUNK = 256;

/**
 * One task of ROUNDS Write rounds; returns its wall time and the process's CPU time. `server`:
 * the whole path — the real Anthropic provider streaming each answer over loopback SSE from the
 * fake model server, the Write's content in SSE_CHUNK-character deltas, as a model sends it;
 * without: the answers handed to the task in memory, each whole in one event (the strictest
 * figure: the round is only Keel's own work).
 */
async function writeRounds(checkpoints: boolean, server?: FakeModelServer): Promise<{ wall: number; cpu: number }> {
  const ws = mkdtempSync(join(tmpdir(), 'keel-bench-ov-ws-'));
  const storage = mkdtempSync(join(tmpdir(), 'keel-bench-ov-st-'));
  for (let i = 0; i < ROUNDS; i++) writeFileSync(join(ws, `f${i}.ts`), SOURCE.subarray(i * KB100, (i + 1) * KB100));
  const contentOf = (n: number) => SOURCE.subarray((n + 20) * KB100, (n + 21) * KB100).toString('utf8');
  if (server) {
    for (let n = 0; n < ROUNDS; n++) server.enqueue({ blocks: [{ type: 'tool_use', id: `toolu_w${n}`, name: 'Write', input: { file_path: `f${n}.ts`, content: contentOf(n) } }], chunkSize: SSE_CHUNK });
    server.enqueue({ blocks: [{ type: 'text', text: 'done' }] });
  }
  const provider = new Answers((_req, n) => {
    if (n >= ROUNDS) return answer([{ type: 'text', text: 'done' }]);
    return answer([{ type: 'tool_use', id: `toolu_w${n}`, name: 'Write', input: { file_path: `f${n}.ts`, content: contentOf(n) } }]);
  });
  const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, ...(server ? {} : { providerFactory: () => provider }), ownerLabel: 'bench', ...(checkpoints ? {} : { checkpoints: false }) });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const task = runtime.startTask({
    prompt: 'write the files',
    provider: server ? { provider: 'anthropic', model: 'claude-bench', baseUrl: server.url, apiKey: 'sk-bench' } : { provider: 'anthropic', model: 'claude-bench' },
    mode: 'bypassPermissions',
  });
  const done = await task.settled();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  if (done.status !== 'completed') throw new Error(`the bench task ended ${done.status}`);
  runtime.dispose();
  rmSync(ws, { recursive: true, force: true });
  rmSync(storage, { recursive: true, force: true });
  return { wall: ms, cpu: (c.user + c.system) / 1000 };
}

async function overhead(server?: FakeModelServer) {
  await writeRounds(true, server);
  await writeRounds(false, server);
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const withMs: number[] = [];
  const withoutMs: number[] = [];
  for (let pair = 0; pair < 9; pair++) {
    // Alternating which goes first, so a drift in the machine's load hits both sides alike.
    let a: { wall: number; cpu: number };
    let b: { wall: number; cpu: number };
    if (pair % 2 === 0) {
      a = await writeRounds(true, server);
      b = await writeRounds(false, server);
    } else {
      b = await writeRounds(false, server);
      a = await writeRounds(true, server);
    }
    withMs.push(a.wall);
    withoutMs.push(b.wall);
    ratios.push(a.wall / b.wall);
    cpuRatios.push(a.cpu / b.cpu);
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return {
    checkpoint_overhead_ratio: Number(med(ratios).toFixed(3)),
    checkpoint_overhead_cpu_ratio: Number(med(cpuRatios).toFixed(3)),
    round_ms_with: Number((med(withMs) / ROUNDS).toFixed(2)),
    round_ms_without: Number((med(withoutMs) / ROUNDS).toFixed(2)),
    load: Number(loadavg()[0]!.toFixed(1)),
  };
}

async function rewind100() {
  const times: number[] = [];
  let files = 0;
  for (let run = 0; run < 3; run++) {
    const ws = mkdtempSync(join(tmpdir(), 'keel-bench-rw-ws-'));
    const storage = mkdtempSync(join(tmpdir(), 'keel-bench-rw-st-'));
    mkdirSync(join(ws, 'src'));
    const writes = Array.from({ length: 100 }, (_, i) => {
      const size = 4096 + ((i * 977) % 4096);
      writeFileSync(join(ws, 'src', `m${i}.ts`), SOURCE.subarray(i * 8192, i * 8192 + size));
      return { type: 'tool_use' as const, id: `toolu_${i}`, name: 'Write', input: { file_path: `src/m${i}.ts`, content: SOURCE.subarray(900_000 + i * 1000, 900_000 + i * 1000 + size).toString('utf8') } };
    });
    const provider = new Answers((_req, n) => (n === 0 ? answer(writes) : answer([{ type: 'text', text: 'done' }])));
    const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, ownerLabel: 'bench' });
    const task = runtime.startTask({ prompt: 'write 100 files', provider: { provider: 'anthropic', model: 'claude-bench' }, mode: 'bypassPermissions' });
    await task.settled();
    runtime.dispose();
    const access = { store: new TaskStore(storage), owner: 'bench' };
    const t0 = performance.now();
    const { plan } = await previewRewind(access, task.id, 2, 'files');
    const r = await rewindTask(access, task.id, 2, 'files');
    times.push(performance.now() - t0);
    files = plan.files.length;
    if (r.files.filter((f) => f.outcome === 'restored').length !== 100) throw new Error('the rewind did not restore the 100 files');
    rmSync(ws, { recursive: true, force: true });
    rmSync(storage, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { rewind_ms_100_files: Math.round(times[1]!), rewind_files: files };
}

async function main() {
  const server = await startFakeModelServer();
  const wholePath = { ...(await overhead(server)), sse_chunk_chars: SSE_CHUNK };
  await server.close();
  const m = await overhead();
  const inMemory = {
    checkpoint_overhead_ratio_in_memory: m.checkpoint_overhead_ratio,
    checkpoint_overhead_cpu_ratio_in_memory: m.checkpoint_overhead_cpu_ratio,
    round_ms_with_in_memory: m.round_ms_with,
    round_ms_without_in_memory: m.round_ms_without,
  };
  const result = { ...(await bytesRatio(false)), ...(await bytesRatio(true)), ...wholePath, ...inMemory, ...(await rewind100()), node: process.version };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
