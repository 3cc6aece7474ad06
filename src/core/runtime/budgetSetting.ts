import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The person's standing budget for a task (docs/cli.md, "Budget"): `"maxBudgetUsd": 5` in
 * `~/.keel/settings.json` (the CLI; VS Code's setting is `keel.maxBudgetUsd`). Only the person's
 * own file: a repository's settings cannot raise what a task may spend. Never throws.
 */
export function readUserMaxBudget(home: string = homedir()): { capUsd: number | undefined; problem?: string } {
  const path = join(home, '.keel', 'settings.json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return { capUsd: undefined };
  }
  const value = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).maxBudgetUsd : undefined;
  if (value === undefined || value === null) return { capUsd: undefined };
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return { capUsd: undefined, problem: `${path}: maxBudgetUsd must be a positive number of US dollars; no budget is set from it` };
  return { capUsd: value };
}

/** A budget typed by a person ("5", "0.50", "$2"), or null when it is not a positive amount. */
export function parseBudget(text: string): number | null {
  const n = Number(text.trim().replace(/^\$/, ''));
  return Number.isFinite(n) && n > 0 ? n : null;
}
