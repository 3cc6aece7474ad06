// The pool bench's big-answer phase (bench/pool.bench.ts): a 50 MB answer through the whole path
// of `keel run` as a person runs it, the built CLI (`node cli.js run … --output-format
// stream-json`) against the fake model server: the SDK's SSE parse on a worker, the stream
// machine, the worker channel (long messages in parts), the host's task machine and event log,
// the stream-json output read by this process; then `keel run --resume` of that task (the log
// read back, the 50 MB conversation sent down to the worker, summarised there since it is over
// the context limit). The same two runs with `--workers 0` (in the host) are the baseline, run
// alternately with them; and a bare read of the task's log (readFileSync + split + JSON.parse of
// every line) is the least any resume must do. The issue-26 test (test/integration/cli/
// workerFaults.test.ts, "a 50 MB answer…") runs the same two commands.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeTurn } from '../test/fixtures/fake-model-server';

export interface BigAnswerServer {
  url: string;
  enqueue(...turns: FakeTurn[]): Promise<void>;
}

export interface BigAnswerFigures {
  big_answer_mb: number;
  big_answer_worker_s: number;
  big_answer_in_host_s: number;
  big_answer_worker_ratio_vs_in_host: number;
  big_resume_worker_s: number;
  big_resume_in_host_s: number;
  big_resume_worker_ratio_vs_in_host: number;
  big_log_raw_parse_s: number;
  big_resume_in_host_ratio_vs_raw_parse: number;
}

const ANSWER = ('x'.repeat(1023) + '\n').repeat(50 * 1024);
const ROUNDS = 2;

/** Runs `node cli …`; resolves with its wall seconds and stdout once it exits 0 (else throws with its stderr). */
function runCli(cli: string, args: string[], storage: string): Promise<{ s: number; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, ...args, '--storage', storage], {
    env: { PATH: process.env.PATH, HOME: storage, KEEL_HOME: storage, ANTHROPIC_API_KEY: 'sk-bench-big', KEEL_MEMORY: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => out.push(d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) =>
    child.once('close', (code) => {
      const s = (performance.now() - t0) / 1000;
      if (code === 0) resolve({ s, stdout: out.join('') });
      else reject(new Error(`keel ${args.slice(0, 2).join(' ')} exited ${code}: ${err.slice(-2000)}`));
    }),
  );
}

/** Seconds to read the log the least a reader can: the whole file, split, every line parsed. */
function rawParse(path: string): number {
  const t0 = performance.now();
  for (const line of readFileSync(path, 'utf8').split('\n')) if (line) JSON.parse(line);
  return (performance.now() - t0) / 1000;
}

/** One answer run and its resume with `--workers N`; seconds of each, and the bare parse of the log between them. */
async function pair(cli: string, server: BigAnswerServer, workers: number): Promise<{ answer: number; resume: number; raw: number }> {
  const storage = mkdtempSync(join(tmpdir(), 'keel-bench-big-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-bench-big-ws-'));
  try {
    await server.enqueue(
      { blocks: [{ type: 'text', text: ANSWER }], chunkSize: 256 * 1024 },
      { blocks: [{ type: 'text', text: 'Summary: a long answer of x lines.' }] },
      { blocks: [{ type: 'text', text: 'A short follow-up answer.' }] },
    );
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-bench', '--workspace', workspace, '--workers', String(workers)];
    const first = await runCli(cli, ['run', 'write a lot', ...common, '--output-format', 'stream-json'], storage);
    const done = JSON.parse(first.stdout.trimEnd().split('\n').at(-1)!) as { type: string; status: string; taskId: string };
    if (done.type !== 'done' || done.status !== 'completed') throw new Error(`the 50 MB answer did not complete: ${JSON.stringify(done)}`);
    const taskDir = join(storage, 'tasks', done.taskId);
    if (!readdirSync(taskDir).includes('events.jsonl')) throw new Error(`no events.jsonl in ${taskDir}`);
    const raw = rawParse(join(taskDir, 'events.jsonl'));
    const next = await runCli(cli, ['run', '--resume', done.taskId, 'and now briefly', ...common], storage);
    if (!next.stdout.includes('A short follow-up answer.')) throw new Error(`the resumed run did not answer: ${next.stdout.slice(-500)}`);
    return { answer: first.s, resume: next.s, raw };
  } finally {
    rmSync(storage, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** `cli` is a built cli.js with worker.js and core.js beside it (as in dist/). */
export async function bigAnswer(cli: string, server: BigAnswerServer): Promise<BigAnswerFigures> {
  const worker: { answer: number; resume: number; raw: number }[] = [];
  const inHost: { answer: number; resume: number; raw: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    inHost.push(await pair(cli, server, 0));
    worker.push(await pair(cli, server, 1));
  }
  // The better (lower) of each, as the pool bench keeps its other phases' figures.
  const best = (xs: { answer: number; resume: number; raw: number }[], k: 'answer' | 'resume' | 'raw') => Math.min(...xs.map((x) => x[k]));
  const r2 = (n: number) => Number(n.toFixed(2));
  const raw = Math.min(best(worker, 'raw'), best(inHost, 'raw'));
  return {
    big_answer_mb: Math.round(ANSWER.length / (1024 * 1024)),
    big_answer_worker_s: r2(best(worker, 'answer')),
    big_answer_in_host_s: r2(best(inHost, 'answer')),
    big_answer_worker_ratio_vs_in_host: r2(best(worker, 'answer') / best(inHost, 'answer')),
    big_resume_worker_s: r2(best(worker, 'resume')),
    big_resume_in_host_s: r2(best(inHost, 'resume')),
    big_resume_worker_ratio_vs_in_host: r2(best(worker, 'resume') / best(inHost, 'resume')),
    big_log_raw_parse_s: r2(raw),
    big_resume_in_host_ratio_vs_raw_parse: r2(best(inHost, 'resume') / raw),
  };
}
