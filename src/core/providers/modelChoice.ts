import { CLAUDE_FAMILIES, DEFAULT_MODELS } from '../../shared/domain/models';

/**
 * Which model a run uses: a precedence, not a state machine (it has no lifetime of its own; each
 * run asks with its inputs). An environment override (KEEL_MODEL in VS Code's environment; `--model`
 * for `keel run`) > the model the user selected (`keel.model`; `$KEEL_MODEL` for `keel run`) >
 * the provider's default; in plan mode the plan model wins when one is set. Every id is
 * normalised (aliases, case).
 */
export interface ModelChoiceInput {
  envModel?: string | null;
  userModel?: string | null;
  planModel?: string | null;
  providerDefault?: string;
  planMode?: boolean;
}

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

/** The normalised model id a run with `input` sends. Pure; never throws. */
export function resolveModel(input: ModelChoiceInput): string {
  const plan = normalizeModelId(input.planModel);
  if (input.planMode && plan) return plan;
  return normalizeModelId(input.envModel) ?? normalizeModelId(input.userModel) ?? normalizeModelId(input.providerDefault) ?? DEFAULT_MODEL;
}
