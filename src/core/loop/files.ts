import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { LinkRefused, linkProblem, makeDirsNoFollow, readNoFollow, writeAtomicNoFollowSync, writeNoFollowSync } from '../security/linkFreeFiles';
import { DEFAULT_MAX_ITERATIONS, DEFAULT_STOP_WORD, progressDigest, type LoopSettings } from './judge';
import { errorMessage } from '../../shared/domain/errors';

/**
 * A loop's files, under `<workspace>/.keel/loop/<name>/` (docs/loop.md):
 * - `anchor.md`: the goal, read by every iteration (the person may edit it between iterations);
 * - `progress.md`: the loop's working file, kept current by the agent;
 * - `guardrails.md`: errors seen 3 or more times, appended by Keel, read by every iteration;
 * - `state.json`: iteration, verdicts and reasons — what a reloaded window continues from;
 * - `history/<n>.md`: the progress file after iteration n (the loop panel shows the changes).
 *
 * Every one of them is read and written without following links (security/linkFreeFiles.ts): a
 * repository that ships `.keel/loop/<name>/progress.md -> ../../settings.local.json` (or links
 * any folder on the way) gets its loop refused with `LinkRefused`, never a write through the link
 * or a linked file's text in the iteration's prompt.
 */
export const LOOP_STATUSES = ['active', 'continuing', 'complete', 'stopped', 'stalled', 'cancelled'] as const;
export type LoopStatus = (typeof LOOP_STATUSES)[number];

const iterationSchema = z.object({
  n: z.number().int().positive(),
  taskId: z.string(),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  status: z.string().optional(),
  stopReason: z.string().optional(),
  finalMessage: z.string().optional(),
  verdict: z.enum(['complete', 'stopped', 'stalled', 'continue']).optional(),
  reasons: z.array(z.string()).default([]),
  checkpoint: z.object({ ref: z.string(), commit: z.string() }).optional(),
  costUsd: z.number().optional(),
});
export type IterationRecord = z.infer<typeof iterationSchema>;

const settingsSchema = z.object({
  maxIterations: z.number().int().positive(),
  stopWord: z.string(),
  promise: z.string().optional(),
  checkpoints: z.boolean().default(false),
});
export type StoredLoopSettings = z.infer<typeof settingsSchema>;

const stateSchema = z.object({
  version: z.literal(1),
  name: z.string(),
  status: z.enum(LOOP_STATUSES),
  settings: settingsSchema,
  /** Iterations finished. */
  iteration: z.number().int().nonnegative(),
  iterations: z.array(iterationSchema),
  progressDigests: z.array(z.string()),
  stopReasons: z.array(z.string()),
  errorCounts: z.record(z.string(), z.number()),
  reasons: z.array(z.string()).default([]),
  /**
   * What iterations that were cut off (a budget pause, a signal, a reload) spent before they were
   * started again as new tasks: their records are replaced, their spend is not forgotten (a loop's
   * budget counts every priced call).
   */
  cutOffCostUsd: z.number().nonnegative().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type LoopState = z.infer<typeof stateSchema>;

export const LOOP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function loopsDir(workspace: string): string {
  return join(workspace, '.keel', 'loop');
}

export function loopDir(workspace: string, name: string): string {
  return join(loopsDir(workspace), name);
}

export interface LoopPaths {
  dir: string;
  anchor: string;
  progress: string;
  guardrails: string;
  state: string;
  history: string;
}

export function loopPaths(workspace: string, name: string): LoopPaths {
  const dir = loopDir(workspace, name);
  return { dir, anchor: join(dir, 'anchor.md'), progress: join(dir, 'progress.md'), guardrails: join(dir, 'guardrails.md'), state: join(dir, 'state.json'), history: join(dir, 'history') };
}

/** A loop name from its goal: lower-case words joined by dashes, at most 40 characters. */
export function nameFromGoal(goal: string): string {
  const slug = goal
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return slug || 'loop';
}

/** Why `name` cannot name a loop, or null. */
export function nameProblem(name: string): string | null {
  if (!LOOP_NAME.test(name) || name === '.' || name === '..') return `"${name}" is not a loop name (letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64)`;
  return null;
}

export function defaultSettings(over: Partial<StoredLoopSettings> = {}): StoredLoopSettings {
  return { maxIterations: DEFAULT_MAX_ITERATIONS, stopWord: DEFAULT_STOP_WORD, checkpoints: false, ...over };
}

export function judgeSettings(s: StoredLoopSettings): LoopSettings {
  return { maxIterations: s.maxIterations, stopWord: s.stopWord, ...(s.promise !== undefined ? { promise: s.promise } : {}) };
}

const PROGRESS_TEMPLATE = '# Progress\n\nNothing yet. Record here what is done, what was learned and what comes next.\n';
const GUARDRAILS_TEMPLATE = '# Guardrails\n\nErrors this loop ran into 3 or more times. Keel appends them here; every iteration reads them.\n';

/**
 * Creates a new loop's folder and files. Throws when it already exists (`existsLoop` first) or on
 * I/O errors. The first progress file never holds the stop word (it would end the loop at once).
 */
export function createLoop(workspace: string, name: string, goal: string, settings: StoredLoopSettings, now = Date.now()): LoopState {
  const p = loopPaths(workspace, name);
  // Nothing is written until every place is known to be free of links.
  checkLoopFolder(workspace, name);
  makeDirsNoFollow(workspace, p.history);
  writeNoFollowSync(workspace, p.anchor, `${goal.trim()}\n`);
  const progress = PROGRESS_TEMPLATE.includes(settings.stopWord) ? '' : PROGRESS_TEMPLATE;
  writeNoFollowSync(workspace, p.progress, progress);
  writeNoFollowSync(workspace, p.guardrails, GUARDRAILS_TEMPLATE);
  keepProgress(workspace, name, 0, progress);
  const state: LoopState = {
    version: 1,
    name,
    status: 'active',
    settings,
    iteration: 0,
    iterations: [],
    progressDigests: [progressDigest(progress)],
    stopReasons: [],
    errorCounts: {},
    reasons: [],
    createdAt: now,
    updatedAt: now,
  };
  saveState(workspace, state);
  return state;
}

/** Whether something is at the loop's `state.json` (a link there counts: the name is taken, and reading it is refused). */
export function existsLoop(workspace: string, name: string): boolean {
  try {
    lstatSync(loopPaths(workspace, name).state);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throws LinkRefused when the loop's folder, a folder above it inside the workspace, or any of its
 * entries (anchor, progress, guardrails, state, history/, the lock's entries of store/taskLock.ts)
 * is a symbolic link or not what it should be. Missing ones are fine.
 */
export function checkLoopFolder(workspace: string, name: string): void {
  const p = loopPaths(workspace, name);
  const refuse = (why: string, at: string): never => {
    throw new LinkRefused(`loop "${name}" cannot be used: ${why} (Keel does not follow links in .keel/loop/)`, at);
  };
  for (const file of [p.anchor, p.progress, p.guardrails, p.state, join(p.dir, 'lock.owner.json')]) {
    const problem = linkProblem(workspace, file);
    if (problem) refuse(problem, file);
    // A hard link makes the file another file's too: a write to it would change both.
    if (nameCount(file) > 1) refuse(`${relative(workspace, file)} has more than one name (a hard link)`, file);
  }
  for (const dir of [p.history, join(p.dir, 'lock')]) if (isLink(dir)) refuse(`${relative(workspace, dir)} is a symbolic link`, dir);
}

function nameCount(path: string): number {
  try {
    return lstatSync(path).nlink;
  } catch {
    return 0;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Reads a loop's state. Throws with a message for people when it is missing or unreadable. */
export function readState(workspace: string, name: string): LoopState {
  const path = loopPaths(workspace, name).state;
  let text: string;
  try {
    const read = readNoFollow(workspace, path);
    if (!read) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
    text = read.text;
  } catch (err) {
    if (err instanceof LinkRefused) throw new LinkRefused(`loop "${name}" cannot be used: ${err.message}`, err.at);
    throw new Error((err as NodeJS.ErrnoException).code === 'ENOENT' ? `there is no loop "${name}" in ${workspace}` : `cannot read ${path}: ${errorMessage(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${errorMessage(err)})`);
  }
  const parsed = stateSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${path} is not a loop state: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export function saveState(workspace: string, state: LoopState): void {
  writeAtomicNoFollowSync(workspace, loopPaths(workspace, state.name).state, `${JSON.stringify({ ...state, updatedAt: Date.now() }, null, 2)}\n`);
}

/** The loops of a workspace that have a readable state, by name. */
export function listLoops(workspace: string): { states: LoopState[]; problems: string[] } {
  const states: LoopState[] = [];
  const problems: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(loopsDir(workspace));
  } catch {
    return { states, problems };
  }
  for (const name of names.sort()) {
    if (nameProblem(name) || !existsLoop(workspace, name)) continue;
    try {
      states.push(readState(workspace, name));
    } catch (err) {
      problems.push(errorMessage(err));
    }
  }
  return { states, problems };
}

/**
 * A loop file's text (`path` inside `workspace`), '' when it does not exist. Throws LinkRefused
 * when it (or a folder on the way) is a link, and other I/O errors: an iteration must not run on a
 * progress file Keel could not read.
 */
export function readText(workspace: string, path: string): string {
  return readNoFollow(workspace, path)?.text ?? '';
}

/** Like `readText`, for views: '' for a file that cannot be read (a link included). Never throws. */
export function readTextForView(workspace: string, path: string): string {
  try {
    return readText(workspace, path);
  } catch {
    return '';
  }
}

/** Keeps the progress file as it was after iteration `n` (at most 256 KB), for the loop panel's changes. */
export function keepProgress(workspace: string, name: string, n: number, progress: string): void {
  const p = loopPaths(workspace, name);
  makeDirsNoFollow(workspace, p.history);
  writeNoFollowSync(workspace, join(p.history, `${n}.md`), progress.length > 262_144 ? `${progress.slice(0, 262_144)}\n… (cut)\n` : progress);
}

/** The progress file after iteration `n` (0: as the loop started, when kept); undefined when not kept or not readable. */
export function keptProgress(workspace: string, name: string, n: number): string | undefined {
  try {
    return readNoFollow(workspace, join(loopPaths(workspace, name).history, `${n}.md`))?.text;
  } catch {
    return undefined;
  }
}

/** A name for a new loop from its goal (`nameFromGoal`), made unique in the workspace. */
export function uniqueLoopName(workspace: string, goal: string): string {
  const base = nameFromGoal(goal);
  if (!existsLoop(workspace, base)) return base;
  for (let i = 2; ; i++) if (!existsLoop(workspace, `${base}-${i}`)) return `${base}-${i}`;
}

/** What the loop has spent so far: every iteration's priced calls, the cut-off ones' included. */
export function loopSpentUsd(state: Pick<LoopState, 'iterations' | 'cutOffCostUsd'>): number {
  return state.iterations.reduce((sum, i) => sum + (i.costUsd ?? 0), state.cutOffCostUsd ?? 0);
}
