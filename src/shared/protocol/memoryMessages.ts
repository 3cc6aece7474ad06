import { z } from 'zod';

/**
 * The Memory page of the chat webview, as data (docs/memory.md, "In VS Code"): every memory of the
 * workspace (`.keel/memory/*.md`) with its front matter and a short preview, the memory settings,
 * and what the person can do about one memory. Memory files come from the repository: untrusted,
 * bounded here (the host cuts before it sends, `boundMemory`), and rendered as text only.
 */

/** Longest preview of a memory's text, in characters (one line). */
export const MEMORY_PREVIEW_CHARS = 240;

export const MEMORY_ACTIONS = ['open', 'delete'] as const;
export type MemoryAction = (typeof MEMORY_ACTIONS)[number];

export const MEMORY_SETTINGS = ['enabled', 'autoSave'] as const;
export type MemorySettingName = (typeof MEMORY_SETTINGS)[number];

/**
 * A memory's file name as the page may name it. Loose on purpose: the host resolves and checks
 * every name against the memory folder (and says why it refuses one), so this only bounds it.
 */
export const memoryFileSchema = z.string().min(1, 'empty memory file name').max(200, 'memory file name too long');

const text = (max: number) => z.string().max(max);

export const memoryViewSchema = z.object({
  /** The file's name in `.keel/memory/`. */
  file: memoryFileSchema,
  title: text(300),
  /** ISO time, or empty when the file does not say. */
  created: text(100),
  /** The task that taught it; absent for one a person wrote. */
  source: text(200).optional(),
  tags: z.array(text(100)).max(50),
  /** The start of its text, on one line. */
  preview: text(MEMORY_PREVIEW_CHARS + 1),
});
export type MemoryView = z.infer<typeof memoryViewSchema>;

export const memoryStateSchema = z.object({
  /** False when no folder is open (memory belongs to a workspace folder). */
  available: z.boolean(),
  /** The folder shown to the person (e.g. `/home/me/project/.keel/memory`). */
  dir: text(4000),
  /** Every memory, sorted by file name. */
  memories: z.array(memoryViewSchema).max(10_000),
  /** Why the folder (or some files) could not be read, one line each. */
  problems: z.array(text(1000)).max(50),
  /** `keel.memory.enabled` and `keel.memory.autoSave` as they apply now. */
  settings: z.object({ enabled: z.boolean(), autoSave: z.boolean() }),
});
export type MemoryState = z.infer<typeof memoryStateSchema>;

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A stored memory cut to what the page's schema accepts. Pure. */
export function boundMemory(m: { file: string; title: string; created: string; source?: string; tags: string[]; body: string }): MemoryView {
  return {
    file: m.file.slice(0, 200),
    title: cut(oneLine(m.title), 300),
    created: m.created.slice(0, 100),
    ...(m.source ? { source: m.source.slice(0, 200) } : {}),
    tags: m.tags.slice(0, 50).map((t) => cut(oneLine(t), 100)),
    preview: cut(oneLine(m.body), MEMORY_PREVIEW_CHARS + 1),
  };
}
