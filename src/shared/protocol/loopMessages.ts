import { z } from 'zod';
import type { LoopView } from '../domain/loop';

/**
 * The loop page of the chat webview, as data (docs/loop.md, "In VS Code"): every loop of the
 * workspace with its iterations, verdicts, reasons, progress after each iteration and checkpoints,
 * and what the person can do about one. Goal, progress, reasons and stop reasons come from the
 * model and the repository: untrusted, bounded here (the host cuts before it sends, `boundLoop`),
 * and rendered as text only.
 */

/** Longest progress file text sent per iteration; the rest is cut with a marker. */
export const MAX_PROGRESS_CHARS = 20_000;
const MAX_TEXT = 4000;

export const LOOP_ACTIONS = ['cancel', 'continue', 'restore'] as const;
export type LoopAction = (typeof LOOP_ACTIONS)[number];

/** A loop's name as the core allows it (files.ts LOOP_NAME). */
export const loopNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'not a loop name');

const text = (max: number) => z.string().max(max);
const status = z.enum(['active', 'continuing', 'complete', 'stopped', 'stalled', 'cancelled']);

export const loopIterationViewSchema = z.object({
  n: z.number().int().positive(),
  taskId: text(200),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  status: text(64).optional(),
  stopReason: text(MAX_TEXT).optional(),
  verdict: z.enum(['complete', 'stopped', 'stalled', 'continue']).optional(),
  reasons: z.array(text(MAX_TEXT)).max(20),
  checkpoint: z.object({ ref: text(400), commit: z.string().regex(/^[0-9a-f]{40,64}$/) }).optional(),
  costUsd: z.number().optional(),
  progress: text(MAX_PROGRESS_CHARS + 100).optional(),
});

export const loopPageViewSchema = z.object({
  name: loopNameSchema,
  goal: text(MAX_TEXT),
  status,
  iteration: z.number().int().nonnegative(),
  settings: z.object({ maxIterations: z.number().int().positive(), stopWord: text(64), promise: text(MAX_TEXT).optional(), checkpoints: z.boolean() }),
  reasons: z.array(text(MAX_TEXT)).max(20),
  initialProgress: text(MAX_PROGRESS_CHARS + 100),
  iterations: z.array(loopIterationViewSchema).max(10_000),
  currentTaskId: text(200).optional(),
  /**
   * Who drives it: `here` (this window), `elsewhere` (another window or `keel loop`: read-only
   * here, `heldBy` says who), `none` (nobody: an interrupted or stalled loop can be continued).
   */
  driver: z.enum(['here', 'elsewhere', 'none']),
  heldBy: text(300).optional(),
});
export type LoopPageView = z.infer<typeof loopPageViewSchema>;

export const loopsStateSchema = z.object({
  loops: z.array(loopPageViewSchema).max(200),
  /** Files under .keel/loop/ that could not be read, one line each. */
  problems: z.array(text(1000)).max(50),
  /** False when no folder is open (a loop works inside a workspace folder). */
  available: z.boolean(),
});
export type LoopsState = z.infer<typeof loopsStateSchema>;

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}\n… (${s.length - max} more characters not shown)`;
}

/** A runner's view cut to what the page's schema accepts. Pure. */
export function boundLoop(v: LoopView, driver: LoopPageView['driver'], heldBy?: string): LoopPageView {
  const reasons = (r: string[]) => r.slice(0, 20).map((x) => cut(x, MAX_TEXT - 100));
  return {
    name: v.name,
    goal: cut(v.goal, MAX_TEXT - 100),
    status: v.status,
    iteration: v.iteration,
    settings: { ...v.settings, stopWord: v.settings.stopWord.slice(0, 64), ...(v.settings.promise !== undefined ? { promise: cut(v.settings.promise, MAX_TEXT - 100) } : {}) },
    reasons: reasons(v.reasons),
    initialProgress: cut(v.initialProgress, MAX_PROGRESS_CHARS),
    iterations: v.iterations.slice(-10_000).map((i) => ({
      n: i.n,
      taskId: i.taskId.slice(0, 200),
      startedAt: i.startedAt,
      reasons: reasons(i.reasons),
      ...(i.endedAt !== undefined ? { endedAt: i.endedAt } : {}),
      ...(i.status !== undefined ? { status: i.status.slice(0, 64) } : {}),
      ...(i.stopReason !== undefined ? { stopReason: cut(i.stopReason, MAX_TEXT - 100) } : {}),
      ...(i.verdict !== undefined ? { verdict: i.verdict } : {}),
      ...(i.checkpoint && /^[0-9a-f]{40,64}$/.test(i.checkpoint.commit) ? { checkpoint: { ref: i.checkpoint.ref.slice(0, 400), commit: i.checkpoint.commit } } : {}),
      ...(i.costUsd !== undefined ? { costUsd: i.costUsd } : {}),
      ...(i.progress !== undefined ? { progress: cut(i.progress, MAX_PROGRESS_CHARS) } : {}),
    })),
    ...(v.currentTaskId ? { currentTaskId: v.currentTaskId.slice(0, 200) } : {}),
    driver,
    ...(heldBy ? { heldBy: heldBy.slice(0, 300) } : {}),
  };
}
