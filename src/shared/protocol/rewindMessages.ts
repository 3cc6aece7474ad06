import { z } from 'zod';

/**
 * The chat's messages about rewinds (issue 23, docs/persistence.md "In VS Code") and about
 * reviewing a proposed edit change by change. Defined once, here; toWebview.ts and fromWebview.ts
 * list them in their unions.
 */

export const rewindScopeSchema = z.enum(['both', 'files', 'conversation']);

/** One file of a rewind's preview: what would happen to it, and whether the person must decide. */
export const rewindFileViewSchema = z.object({
  path: z.string().max(4096),
  action: z.enum(['restore', 'remove', 'notRestorable']),
  /** Changed since Keel last wrote it: the person chooses to keep theirs or overwrite. */
  conflict: z.boolean(),
  reason: z.string().max(2000).optional(),
});

/** What a rewind to before a step would do (the host opened the diffs in VS Code's diff editor). */
export const rewindPreviewSchema = z.object({
  previewId: z.string().min(1).max(200),
  taskId: z.string().max(200),
  step: z.number().int().positive(),
  stepKind: z.enum(['message', 'tool', 'rewind']),
  label: z.string().max(2000),
  files: z.array(rewindFileViewSchema).max(10_000),
  notes: z.array(z.string().max(2000)).max(100),
  /** How many messages the conversation would have (when it is rewound). */
  conversationMessages: z.number().int().nonnegative(),
});
export type RewindPreviewView = z.infer<typeof rewindPreviewSchema>;

const seq = z.number().int().positive();
const stepId = z.string().min(1).max(200);

// ── host → webview ──────────────────────────────────────────────────────────────────────────
/** A rewind preview to show (answers `rewindPreview`); null closes it (applied, cancelled or stale). */
export const rewindPlanMessageSchema = z.object({ type: z.literal('rewindPlan'), seq, preview: rewindPreviewSchema.nullable() });
/** Text to put in the composer (the message a rewind went back to, to send again or change). */
export const composerTextMessageSchema = z.object({ type: z.literal('composerText'), seq, text: z.string().max(200_000) });

/** One hunk's choice in a review: apply it, leave it out, or the person's own lines in its place. */
export const hunkChoiceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('accept') }),
  z.object({ kind: z.literal('reject') }),
  z.object({ kind: z.literal('edit'), lines: z.array(z.string().max(100_000)).max(10_000) }),
]);

// ── webview → host ──────────────────────────────────────────────────────────────────────────
/** "Rewind to here" on a user message, a tool card, or a rewind's Undo: preview a rewind to before that step. */
export const rewindPreviewRequestSchema = z.object({ type: z.literal('rewindPreview'), stepId });
/** Do the previewed rewind: what to put back, and which conflicting files to overwrite (the others are kept). */
export const rewindApplySchema = z.object({ type: z.literal('rewindApply'), previewId: z.string().max(200), scope: rewindScopeSchema, overwrite: z.array(z.string().max(4096)).max(10_000) });
export const rewindCancelSchema = z.object({ type: z.literal('rewindCancel'), previewId: z.string().max(200) });
/** Show one previewed file's diff (current → as it would be) in VS Code's diff editor. */
export const rewindOpenDiffSchema = z.object({ type: z.literal('rewindOpenDiff'), previewId: z.string().max(200), path: z.string().max(4096) });
