import { CLAUDE_FAMILIES, DEFAULT_MODELS } from '../../../shared/domain/models';

/**
 * Model ids as people type them → the ids providers accept. Pure.
 * Aliases follow Claude Code's: `sonnet`, `opus`, `haiku` name the current model of that family.
 */
export const MODEL_ALIASES: Readonly<Record<string, string>> = { ...CLAUDE_FAMILIES, default: DEFAULT_MODELS.anthropic };

/** The model when nothing else says which: Anthropic's default (one table: src/shared/domain/models.ts). */
export const DEFAULT_MODEL = DEFAULT_MODELS.anthropic;

/** Trims, lower-cases Claude ids, resolves aliases; returns null for an empty id. */
export function normalizeModelId(raw: string | undefined | null): string | null {
  const id = (raw ?? '').trim();
  if (!id) return null;
  const lower = id.toLowerCase();
  if (MODEL_ALIASES[lower]) return MODEL_ALIASES[lower]!;
  // Claude ids are lower case; other providers' ids (e.g. "Qwen2.5-Coder:7B") keep their case.
  return lower.startsWith('claude') ? lower : id;
}
