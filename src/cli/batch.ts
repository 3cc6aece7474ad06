import { existsSync, readFileSync, statSync } from 'node:fs';
import type { TaskEvent } from '../shared/domain/events';
import type { TaskHandle } from '../core/runtime/types';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../shared/domain/permissionModes';
import { parseRunArgs, providerFor, type RunArgs } from './args';
import { BATCH_HELP } from './help';
import { createCliRuntime } from './cliRuntime';
import { handleSignals } from './signals';
import { HelpRequested, reportUsage, UsageError } from './usage';

/**
 * `keel batch FILE [run options] [--workers N]`: one task per line of FILE (a prompt, or a JSON
 * object `{"prompt": "...", "mode": "..."}`), run in parallel on a pool of N worker processes
 * (default 2). Prints every event as NDJSON tagged with its line (`{"line": 3, ...event}`), plus
 * a `{"type": "worker", line, taskId, workerId, pid}` line whenever a task moves to a worker;
 * then a summary table on stderr. Exit 0 when every task completed, 1 otherwise.
 */
interface BatchItem {
  line: number;
  prompt: string;
  mode?: PermissionMode;
}

export function parseBatchFile(text: string): BatchItem[] {
  const items: BatchItem[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    if (!line.startsWith('{')) return void items.push({ line: i + 1, prompt: line });
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(`line ${i + 1} starts with "{" but is not JSON`);
    }
    const o = value as { prompt?: unknown; mode?: unknown };
    if (typeof o.prompt !== 'string' || !o.prompt.trim()) throw new UsageError(`line ${i + 1}: a JSON line needs a non-empty "prompt"`);
    if (o.mode !== undefined && !isPermissionMode(o.mode)) throw new UsageError(`line ${i + 1}: "mode" must be one of ${PERMISSION_MODES.join(', ')}`);
    items.push({ line: i + 1, prompt: o.prompt, ...(isPermissionMode(o.mode) ? { mode: o.mode } : {}) });
  });
  if (items.length === 0) throw new UsageError('the batch file has no task (one prompt per line)');
  return items;
}

export async function batchCommand(argv: string[]): Promise<number> {
  let args: RunArgs;
  let items: BatchItem[];
  try {
    // The run options, with FILE where run takes the prompt.
    args = parseRunArgs(argv, process.env, 'batch file');
    if (args.resume) throw new UsageError('--resume is not supported by batch');
    // A batch runs on worker processes: 0 (in this process) is refused, not quietly turned into 2.
    if (args.workersGiven && args.workers === 0) {
      throw new UsageError('--workers must be from 1 to 64 for keel batch, which runs its tasks on worker processes (got "0")');
    }
    const file = args.prompt;
    if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`the batch file ${file} does not exist`);
    items = parseBatchFile(readFileSync(file, 'utf8'));
    if (!existsSync(args.workspace) || !statSync(args.workspace).isDirectory()) throw new UsageError(`the workspace ${args.workspace} is not a folder`);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(BATCH_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('batch', err);
    throw err;
  }
  // The same runtime as keel run (pass-env, sandbox, hooks, status board), on 2 workers by default.
  const cli = await createCliRuntime({ ...args, workers: args.workers > 0 ? args.workers : 2 }, 'keel batch');
  const { runtime } = cli;
  const write = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const tasks: { item: BatchItem; task: TaskHandle; workers: Set<string> }[] = [];
  const unsubscribes: (() => void)[] = [];
  for (const item of items) {
    const mode = item.mode ?? cli.mode;
    const task = runtime.startTask({ prompt: item.prompt, provider: providerFor(args, mode), mode, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
    tasks.push({ item, task, workers: new Set() });
    unsubscribes.push(task.subscribe((e: TaskEvent) => write({ line: item.line, ...e })));
  }
  const pool = runtime.workerPool();
  const seen = new Map<string, string>();
  const stopWatching = pool?.onChange(() => {
    for (const t of tasks) {
      const w = pool.workerOf(t.task.id);
      if (!w || w.pid === null || seen.get(t.task.id) === `${w.id}:${w.pid}`) continue;
      seen.set(t.task.id, `${w.id}:${w.pid}`);
      t.workers.add(`${w.id} (pid ${w.pid})`);
      write({ type: 'worker', line: t.item.line, taskId: t.task.id, workerId: w.id, pid: w.pid });
    }
  });
  const unhandle = handleSignals({
    cancel: () => tasks.forEach((t) => t.task.cancel()),
    interrupt: () => void runtime.interruptAll(),
  });
  try {
    const results = await Promise.all(tasks.map((t) => t.task.settled()));
    // Sub-agents of a cancelled task were cancelled with it: let them settle (bounded) before the exit.
    await runtime.settleAll(15_000);
    const rows = tasks.map((t, i) => [String(t.item.line), t.task.id, results[i]!.status, [...t.workers].join(', ') || '—']);
    const head = ['line', 'task', 'status', 'worker'];
    const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    const fmt = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd();
    process.stderr.write(`${[fmt(head), ...rows.map(fmt)].join('\n')}\n`);
    return results.every((r) => r.status === 'completed') ? 0 : 1;
  } finally {
    stopWatching?.();
    unhandle();
    for (const u of unsubscribes) u();
    await cli.dispose();
    await runtime.shutdownWorkers();
  }
}
