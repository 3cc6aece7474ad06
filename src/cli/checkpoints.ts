import { formatBytes, type RewindScope } from '../shared/domain/checkpoints';
import { unifiedDiff } from '../shared/diff/lineDiff';
import type { PlannedFile, RewindPlan } from '../core/checkpoints/plan';
import { DEFAULT_CHECKPOINT_LIMITS } from '../core/checkpoints/recorder';
import { forkTask, listCheckpoints, plannedTexts, previewRewind, RewindError, rewindTask, type CheckpointsAccess, type ConflictChoice } from '../core/checkpoints/rewinder';
import type { TaskStore } from '../core/store/taskStore';
import { checkpointSettings } from './checkpointSettings';
import { parseCommandLine, UsageError } from './usage';

/**
 * `keel tasks checkpoints|rewind|fork` (docs/cli.md, "Checkpoints, rewind and fork"). A step is
 * the number `checkpoints` prints: every user message, tool call and rewind of the task, in order.
 * Exit: 0 done; 1 refused (a conflict nobody decided, the task is driven elsewhere); 2 bad usage,
 * an unknown id or step.
 */

const OUTPUT = { 'output-format': { type: 'string' }, storage: { type: 'string' } } as const;
const CONFLICT = { 'on-conflict': { type: 'string' }, 'overwrite-file': { type: 'string', multiple: true } } as const;

type Write = (s: string) => void;

export interface CheckpointCommandIo {
  store: (storage: string | undefined) => TaskStore;
  out: Write;
  err: Write;
}

function formatOf(v: string | undefined): 'text' | 'json' {
  if (v === undefined || v === 'text') return 'text';
  if (v === 'json') return 'json';
  throw new UsageError(`--output-format must be text or json (got "${v}")`);
}

function stepNumber(flag: string, v: string | undefined): number {
  if (v === undefined) throw new UsageError(`${flag} STEP is required (the step numbers come from keel tasks checkpoints ID)`);
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} needs a step number (1, 2, …; got "${v}")`);
  return Number(v);
}

function onlyId(sub: string, positionals: string[]): string {
  const [id, extra] = positionals;
  if (!id) throw new UsageError(`${sub} needs a task id`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}" (${sub} takes one task id)`);
  return id;
}

/** The person's conflict answers from the command line (undefined: not decided). */
function decider(values: { 'on-conflict'?: string | undefined; 'overwrite-file'?: string[] | undefined }): (f: PlannedFile) => ConflictChoice | undefined {
  const all = values['on-conflict'];
  if (all !== undefined && all !== 'keep' && all !== 'overwrite') throw new UsageError(`--on-conflict must be keep or overwrite (got "${all}")`);
  const overwrite = new Set(values['overwrite-file'] ?? []);
  return (f) => (overwrite.has(f.path) ? 'overwrite' : all === 'keep' || all === 'overwrite' ? all : overwrite.size ? 'keep' : undefined);
}

export async function checkpointsCommand(sub: 'checkpoints' | 'rewind' | 'fork', argv: string[], io: CheckpointCommandIo, owner = 'keel tasks'): Promise<number> {
  switch (sub) {
    case 'checkpoints': {
      const { values, positionals } = parseCommandLine(argv, OUTPUT, true);
      const format = formatOf(values['output-format']);
      const store = io.store(values.storage);
      const id = store.resolveId(onlyId(sub, positionals));
      const listing = await listCheckpoints({ store, owner }, id);
      const set = checkpointSettings(process.env, (m) => io.err(`keel: ${m}\n`));
      const limits = { ...DEFAULT_CHECKPOINT_LIMITS, ...(set || {}) };
      if (format === 'json') {
        const steps = listing.steps.map((s) => ({ ...s, at: new Date(s.at).toISOString() }));
        io.out(`${JSON.stringify({ ...listing, limits, steps })}\n`);
        return 0;
      }
      const meta = await store.readMeta(id);
      const lines = [
        `Checkpoints of "${meta.title}" (${id})`,
        `  workspace: ${listing.workspace || 'unknown'}`,
        `  storage:   ${formatBytes(listing.ownBytes + listing.sharedBytes)}${listing.sharedBytes ? ` (${formatBytes(listing.sharedBytes)} shared with the task it was forked from)` : ''}`,
        `  limits:    ${formatBytes(limits.maxFileBytes)} per file, ${formatBytes(limits.maxTaskBytes)} per task`,
        '',
        'STEP  KIND     WHEN              WHAT',
      ];
      for (const s of listing.steps) {
        lines.push(`${String(s.step).padEnd(5)} ${s.kind.padEnd(8)} ${new Date(s.at).toISOString().slice(0, 16).replace('T', ' ')}  ${s.label}`);
        for (const f of s.files) {
          const why = f.restorable ? '' : ` — not restorable: ${f.reason ?? 'no earlier content was kept'}`;
          lines.push(`${' '.repeat(33)}${f.restorable ? '  ' : '! '}${f.path}${why}`);
        }
        for (const n of s.notes) lines.push(`${' '.repeat(33)}  (${n})`);
      }
      for (const n of listing.notes) lines.push(`note: ${n}`);
      lines.push('', `Rewind with: keel tasks rewind ${id.slice(0, 8)} --to STEP [--files-only | --conversation-only] [--dry-run]`);
      io.out(`${lines.join('\n')}\n`);
      return 0;
    }
    case 'rewind': {
      const options = { ...OUTPUT, ...CONFLICT, to: { type: 'string' }, 'files-only': { type: 'boolean' }, 'conversation-only': { type: 'boolean' }, 'dry-run': { type: 'boolean' } } as const;
      const { values, positionals } = parseCommandLine(argv, options, true);
      const format = formatOf(values['output-format']);
      if (values['files-only'] && values['conversation-only']) throw new UsageError('--files-only and --conversation-only exclude each other (without either, both are rewound)');
      const scope: RewindScope = values['files-only'] ? 'files' : values['conversation-only'] ? 'conversation' : 'both';
      const n = stepNumber('--to', values.to);
      const decide = decider(values);
      const store = io.store(values.storage);
      const id = store.resolveId(onlyId(sub, positionals));
      const access: CheckpointsAccess = { store, owner };
      if (values['dry-run']) {
        const { plan } = await previewRewind(access, id, n, scope);
        const diffs = await Promise.all(plan.files.map((f) => diffOf(access, id, f)));
        if (format === 'json') io.out(`${JSON.stringify({ taskId: id, dryRun: true, ...planJson(plan, diffs, decide) })}\n`);
        else io.out(planText(plan, diffs, decide, true));
        return 0;
      }
      try {
        const r = await rewindTask(access, id, n, scope, decide);
        const undoStep = (await listCheckpoints(access, id)).steps.find((s) => s.id === r.id)?.step;
        if (format === 'json') {
          const message = r.messageText !== undefined ? { messageText: r.messageText } : {};
          io.out(`${JSON.stringify({ taskId: id, dryRun: false, rewind: r.id, step: r.step.number, scope, files: r.files, notes: r.notes, undoStep, ...message })}\n`);
          return 0;
        }
        const lines = [`Rewound ${scopeWords(scope)} to before step ${r.step.number} (${r.step.label}).`];
        for (const f of r.files) lines.push(`  ${OUTCOME[f.outcome].padEnd(12)} ${f.path}${f.reason ? ` (${f.reason})` : ''}`);
        for (const note of r.notes) lines.push(`note: ${note}`);
        if (r.messageText !== undefined) lines.push('', 'The message you rewound to was:', ...r.messageText.split('\n').map((l) => `  ${l}`));
        if (undoStep) lines.push('', `Undo with: keel tasks rewind ${id.slice(0, 8)} --to ${undoStep}`);
        io.out(`${lines.join('\n')}\n`);
        return 0;
      } catch (err) {
        if (!(err instanceof RewindError) || err.code !== 'conflicts') throw err;
        if (format === 'json') io.out(`${JSON.stringify({ taskId: id, dryRun: false, refused: 'conflicts', conflicts: err.conflicts.map((f) => f.path) })}\n`);
        const how = 'Look with --dry-run, then add --on-conflict keep (keep your versions) or --on-conflict overwrite, or --overwrite-file PATH for some.';
        io.err(`keel tasks rewind: nothing was changed: ${err.message}. ${how}\n`);
        return 1;
      }
    }
    case 'fork': {
      const { values, positionals } = parseCommandLine(argv, { ...OUTPUT, ...CONFLICT, at: { type: 'string' }, 'with-files': { type: 'boolean' } }, true);
      const format = formatOf(values['output-format']);
      const n = stepNumber('--at', values.at);
      const decide = decider(values);
      const store = io.store(values.storage);
      const id = store.resolveId(onlyId(sub, positionals));
      try {
        const r = await forkTask({ store, owner }, id, n, { files: Boolean(values['with-files']), decide });
        if (format === 'json') io.out(`${JSON.stringify({ taskId: r.taskId, forkedFrom: id, step: r.step.number, files: r.files, notes: r.notes })}\n`);
        else {
          io.out(`${r.taskId}\n`);
          io.err(`forked ${id.slice(0, 8)} at step ${r.step.number} (${r.step.label}); continue it with: keel run --resume ${r.taskId} "<message>"\n`);
          for (const f of r.files) io.err(`  ${OUTCOME[f.outcome].padEnd(12)} ${f.path}${f.reason ? ` (${f.reason})` : ''}\n`);
        }
        return 0;
      } catch (err) {
        if (!(err instanceof RewindError) || err.code !== 'conflicts') throw err;
        io.err(`keel tasks fork: nothing was created: ${err.message}. Add --on-conflict keep or --on-conflict overwrite.\n`);
        return 1;
      }
    }
  }
}

const OUTCOME = { restored: 'restored', removed: 'removed', keptYours: 'kept yours', notRestorable: 'not restored' } as const;

function scopeWords(scope: RewindScope): string {
  return scope === 'files' ? 'the files' : scope === 'conversation' ? 'the conversation' : 'the files and the conversation';
}

/** A file's diff for the preview: unified for text, sizes for binary or very large files. */
async function diffOf(access: CheckpointsAccess, id: string, f: PlannedFile): Promise<string> {
  if (f.action === 'notRestorable') return '';
  const { current, target } = await plannedTexts(access, id, f);
  const text = (b: Buffer | null) => b === null || (b.length < 2 * 1024 * 1024 && !b.includes(0));
  if (!text(current) || !text(target)) return `binary or large file: ${current ? formatBytes(current.length) : 'no file'} → ${target ? formatBytes(target.length) : 'no file'}`;
  return unifiedDiff(f.path, current?.toString('utf8') ?? null, target?.toString('utf8') ?? null);
}

function action(f: PlannedFile, decide: (f: PlannedFile) => ConflictChoice | undefined): string {
  if (f.action === 'notRestorable') return `not restorable: ${f.reason ?? 'no earlier content was kept'}`;
  const verb = f.action === 'remove' ? 'remove' : 'restore';
  if (!f.conflict) return verb;
  const choice = decide(f);
  if (choice === 'overwrite') return `${verb} (overwrites your changes)`;
  if (choice === 'keep') return 'keep yours (changed since Keel wrote it)';
  return `${verb}? changed since Keel last wrote it — decide with --on-conflict or --overwrite-file`;
}

function planJson(plan: RewindPlan, diffs: string[], decide: (f: PlannedFile) => ConflictChoice | undefined) {
  return {
    step: plan.step.number,
    label: plan.step.label,
    scope: plan.scope,
    files: plan.files.map((f, i) => ({
      path: f.path,
      action: f.action,
      conflict: f.conflict,
      ...(f.conflict ? { decision: decide(f) ?? null } : {}),
      ...(f.reason ? { reason: f.reason } : {}),
      diff: diffs[i],
    })),
    notes: plan.notes,
    ...(plan.conversation ? { conversationMessages: plan.conversation.length } : {}),
  };
}

function planText(plan: RewindPlan, diffs: string[], decide: (f: PlannedFile) => ConflictChoice | undefined, dry: boolean): string {
  const lines = [`Rewind ${scopeWords(plan.scope)} to before step ${plan.step.number} (${plan.step.label})${dry ? ' — dry run, nothing is written' : ''}`];
  if (plan.scope !== 'conversation') {
    if (plan.files.length === 0) lines.push('  no file would change');
    for (const f of plan.files) lines.push(`  ${f.path}: ${action(f, decide)}`);
  }
  if (plan.conversation) {
    const n = plan.conversation.length;
    lines.push(`  conversation: back to ${n} message${n === 1 ? '' : 's'}${plan.step.kind === 'message' ? ' (before this message; it is printed when you rewind)' : ''}`);
  }
  for (const n of plan.notes) lines.push(`note: ${n}`);
  for (const d of diffs) if (d) lines.push('', d);
  return `${lines.join('\n')}\n`;
}
