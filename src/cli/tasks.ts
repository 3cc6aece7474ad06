import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RUN_PHASES } from '../shared/domain/events';
import type { RunPhasesView, TranscriptItem } from '../shared/domain/transcript';
import { exportJson, exportMarkdown } from '../core/store/exportTask';
import { TaskStore, type LoadedTask } from '../core/store/taskStore';
import { StoreError, type TaskSummary } from '../core/store/types';
import { modelLabel } from '../shared/domain/models';
import { rewoundWords } from '../shared/domain/checkpoints';
import { CUT_OFF_WORDS, cutOffOf } from '../shared/words/answers';
import { storageOption } from './args';
import { replayCommand } from './replay';
import { checkpointsCommand } from './checkpoints';
import { RewindError } from '../core/checkpoints/rewinder';
import { EXIT_STORAGE_UNUSABLE, STORAGE_HINT } from './exitCodes';
import { existingPath, HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

export const TASKS_HELP = `Usage:
  keel tasks list [--json] [--all]                 every stored task, newest first
  keel tasks show ID                               one task: its figures and its chat
  keel tasks export ID --format md|json [--output FILE]
  keel tasks delete ID
  keel tasks replay ID [--until N]                 re-run the task's machines from its log (the
                                                   model's answers and tool results played back)
                                                   and check the same events come out; exit 1 and
                                                   the first difference when they do not
  keel tasks checkpoints ID                        the steps that can be rewound to (every user
                                                   message, tool call and rewind, numbered), with
                                                   the files each changed and the storage held
  keel tasks rewind ID --to STEP [--files-only | --conversation-only] [--dry-run]
                   [--on-conflict keep|overwrite] [--overwrite-file PATH]...
                                                   put the files and/or the conversation back as
                                                   they were before STEP; --dry-run shows each
                                                   file's diff and writes nothing. A file you
                                                   changed since Keel wrote it is never
                                                   overwritten unless you say so (exit 1 until
                                                   you do). A rewind is a step: rewind to it to
                                                   undo it
  keel tasks fork ID --at STEP [--with-files]      a new task with the conversation up to before
                                                   STEP (and, --with-files, the files); prints
                                                   its id
Options: --storage DIR (default: $KEEL_HOME or ~/.keel); --output-format text|json (checkpoints,
rewind, fork). ID may be a unique prefix of the id.
`;

/** One line of `keel tasks list --json`. */
export interface TaskListEntry {
  id: string;
  title: string;
  status: TaskSummary['status'];
  createdAt: string;
  updatedAt: string;
  tokens: number;
  cost: number;
  model: string;
  workspace: string;
  /** Set when another window or process drives the task right now. */
  runningElsewhere?: string;
  /** Set when the task's record could not be saved (it is `failed`): why. */
  recordError?: string;
}

const STORAGE = { storage: { type: 'string' } } as const;

/**
 * `keel tasks list|show|export|delete`. Exit codes: 0 success, 1 the task cannot be read or is
 * locked, 2 bad usage (one line on stderr) or unknown id, 3 the storage folder cannot be used.
 * Each subcommand takes only its own options. Problems with individual tasks (quarantined) go to
 * stderr and never stop a listing.
 */
export async function tasksCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(TASKS_HELP);
    return sub === undefined ? 2 : 0;
  }
  try {
    switch (sub) {
      case 'list': {
        const { values } = parseCommandLine(rest, { ...STORAGE, json: { type: 'boolean' }, all: { type: 'boolean' } }, false);
        return await list(storeAt(values.storage), Boolean(values.json), Boolean(values.all));
      }
      case 'show':
      case 'delete': {
        const { values, positionals } = parseCommandLine(rest, STORAGE, true);
        const store = storeAt(values.storage);
        const id = store.resolveId(onlyId(sub, positionals));
        if (sub === 'delete') {
          await store.delete(id);
          process.stdout.write(`deleted task ${id}\n`);
          return 0;
        }
        const task = await store.load(id);
        process.stdout.write(showText(task, summaryOf(task)));
        return 0;
      }
      case 'export': {
        const { values, positionals } = parseCommandLine(rest, { ...STORAGE, format: { type: 'string' }, output: { type: 'string' } }, true);
        const format = values.format;
        if (format !== 'md' && format !== 'json') throw new UsageError(`export needs --format md or --format json${format === undefined ? '' : ` (got "${format}")`}`);
        const store = storeAt(values.storage);
        const id = store.resolveId(onlyId(sub, positionals));
        const task = await store.load(id);
        const summary = summaryOf(task);
        const out = format === 'md' ? exportMarkdown(task, summary) : exportJson(task, summary);
        if (values.output) writeFileSync(outputFile(values.output), out);
        else process.stdout.write(out);
        return 0;
      }
      case 'checkpoints':
      case 'rewind':
      case 'fork':
        return await checkpointsCommand(sub, rest, { store: storeAt, out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
      case 'replay': {
        const { values, positionals } = parseCommandLine(rest, { ...STORAGE, until: { type: 'string' } }, true);
        const until = values.until === undefined ? undefined : Number(values.until);
        if (until !== undefined && (!/^\d+$/.test(values.until ?? '') || until < 1)) throw new UsageError(`--until needs a positive whole number of events (got "${values.until}")`);
        const store = storeAt(values.storage);
        return await replayCommand(store, store.resolveId(onlyId(sub, positionals)), until);
      }
      default:
        throw new UsageError(sub.startsWith('-') ? 'the subcommand (list, show, export, delete, replay, checkpoints, rewind or fork) comes first' : `unknown subcommand "${sub}"`);
    }
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(TASKS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('tasks', err);
    if (err instanceof RewindError) {
      process.stderr.write(`keel tasks: ${err.message}\n`);
      return err.code === 'no_step' ? 2 : 1;
    }
    if (err instanceof StoreError) {
      if (err.code === 'unusable') {
        process.stderr.write(`keel tasks: ${err.message}; ${STORAGE_HINT}\n`);
        return EXIT_STORAGE_UNUSABLE;
      }
      process.stderr.write(`keel tasks: ${err.message}\n`);
      return err.code === 'not_found' || err.code === 'ambiguous' ? 2 : 1;
    }
    throw err;
  }
}

function storeAt(storage: string | undefined): TaskStore {
  return new TaskStore(storageOption(storage, process.env), { log: (level, message) => level !== 'info' && process.stderr.write(`keel: ${message}\n`) });
}

/** `--output FILE`: resolved from the current folder; the folder it goes into must exist (a typo is not created). */
function outputFile(value: string): string {
  const path = resolve(value);
  try {
    existingPath('--output', dirname(path), 'folder');
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`--output ${value}: the folder ${dirname(path)} does not exist`);
    throw err;
  }
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--output ${value}: is a folder, not a file`);
  return path;
}

/** The one task id a subcommand takes. */
function onlyId(sub: string, positionals: string[]): string {
  const [id, extra] = positionals;
  if (!id) throw new UsageError(`${sub} needs a task id`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}" (${sub} takes one task id)`);
  return id;
}

async function list(store: TaskStore, json: boolean, all: boolean): Promise<number> {
  const { tasks, problems } = await store.list({ includeSubtasks: all });
  for (const p of problems) process.stderr.write(`keel: task ${p.taskId}: ${p.message}\n`);
  const entries = tasks.map(entryOf);
  if (json) {
    process.stdout.write(`${JSON.stringify(entries)}\n`);
    return 0;
  }
  if (entries.length === 0) {
    process.stdout.write(`no tasks in ${store.tasksDir}\n`);
    return 0;
  }
  const rows = entries.map((e) => [e.id.slice(0, 8), e.runningElsewhere ? 'running*' : e.status, e.updatedAt.slice(0, 16).replace('T', ' '), String(e.tokens), `$${e.cost.toFixed(4)}`, e.title]);
  const head = ['ID', 'STATUS', 'UPDATED', 'TOKENS', 'COST', 'TITLE'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  process.stdout.write(`${[fmt(head), ...rows.map(fmt)].join('\n')}\n`);
  if (entries.some((e) => e.runningElsewhere)) process.stdout.write('* running in another window or process\n');
  return 0;
}

function entryOf(t: TaskSummary): TaskListEntry {
  return {
    id: t.id,
    title: t.title,
    status: t.status,
    createdAt: new Date(t.createdAt).toISOString(),
    updatedAt: new Date(t.updatedAt).toISOString(),
    tokens: t.tokens,
    cost: t.costUsd,
    model: t.model,
    workspace: t.workspace,
    ...(t.heldElsewhere ? { runningElsewhere: `${t.heldElsewhere.label ?? 'pid'} ${t.heldElsewhere.pid} on ${t.heldElsewhere.host}` } : {}),
    ...(t.recordError ? { recordError: t.recordError } : {}),
  };
}

function summaryOf(task: LoadedTask): TaskSummary {
  const status = task.meta.status === 'running' && !task.heldElsewhere ? 'interrupted' : task.meta.status;
  return { ...task.meta, status, ...(task.heldElsewhere ? { heldElsewhere: task.heldElsewhere } : {}) };
}

function showText(task: LoadedTask, s: TaskSummary): string {
  const lines = [
    `${s.title}`,
    `  id:        ${s.id}`,
    `  status:    ${s.status}${s.heldElsewhere ? ` (running in another window or process: ${s.heldElsewhere.label ?? 'pid'} ${s.heldElsewhere.pid}; read-only here)` : ''}`,
    ...(s.recordError ? [`  record:    incomplete: ${s.recordError}`] : []),
    `  created:   ${new Date(s.createdAt).toISOString()}`,
    `  updated:   ${new Date(s.updatedAt).toISOString()}`,
    `  model:     ${s.model ? modelLabel(s.model) : 'unknown'}`,
    `  workspace: ${s.workspace || 'unknown'}`,
    `  tokens:    ${s.tokens}   cost: $${s.costUsd.toFixed(4)}   events: ${task.replay.events}`,
    ...phasesText(task.replay.transcript.phases),
    ...(task.replay.transcript.todos?.length
      ? [`  todos:     ${task.replay.transcript.todos.map((t) => `${t.status === 'completed' ? '[x]' : t.status === 'in_progress' ? '[~]' : '[ ]'} ${t.content}`).join('; ')}`]
      : []),
    '',
  ];
  for (const it of task.replay.transcript.items) lines.push(...itemText(it), '');
  if (s.status === 'interrupted') lines.push(`Resume it with: keel run --resume ${s.id} "<follow-up>"`);
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The last run's phases with the time spent in each, in the machine's order, then where it ended. */
function phasesText(p: RunPhasesView | undefined): string[] {
  if (!p) return [];
  const spent = RUN_PHASES.filter((ph) => p.durations[ph] !== undefined).map((ph) => `${ph} ${Math.round(p.durations[ph]!)} ms`);
  return [`  phases (run ${p.run}): ${spent.join(' · ')}${spent.length ? ' ' : ''}→ ${p.phase}${p.failure ? ` (${p.failure})` : ''}`];
}

function itemText(it: TranscriptItem): string[] {
  switch (it.kind) {
    case 'user':
      // As typed (`/review a.ts`), then what it sent when that was something else (a command's text).
      return it.typed !== undefined ? ['> user', indent(it.typed), '  which sent:', indent(indent(it.text))] : ['> user', indent(it.text)];
    case 'assistant': {
      const cut = cutOffOf(it);
      return [`> assistant${cut ? ` (${CUT_OFF_WORDS[cut].tag})` : ''}`, indent(it.text || '(no text)')];
    }
    case 'tool':
      return [
        `> tool ${it.name} ${JSON.stringify(it.input)}`,
        indent(`${it.permission ? `permission: ${it.permission.decision}; ` : ''}${it.result ? `${it.result.isError ? 'error: ' : ''}${it.result.summary}` : 'no result recorded'}`),
      ];
    case 'error':
      return [`> error ${it.code}: ${it.message}`];
    case 'notice':
      return [`> ${it.text}`];
    case 'context': {
      const instructions = it.instructions.length ? ` · instructions: ${it.instructions.join(', ')}` : '';
      const n = it.memories.length;
      const memories = n ? ` · used ${n} ${n === 1 ? 'memory' : 'memories'}: ${it.memories.map((m) => m.file).join(', ')}` : '';
      return [`> context${instructions}${memories}`];
    }
    case 'gatekeeper':
      return [`> memory ${it.decision}${it.file ? ` ${it.file}` : ''} (${it.rule}: ${it.reasons.join('; ')})`];
    case 'rewind':
      return [`> ${it.label} (${rewoundWords(it.files)})`];
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
