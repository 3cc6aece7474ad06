import { readFileSync } from 'node:fs';
import { userSettingsPath } from '../security/passEnv';

/**
 * The person's standing budget per task (docs/cli.md, "Budget"): `"maxBudgetUsd": 5` in
 * `~/.keel/settings.json` (VS Code's setting is `keel.maxBudgetUsd`). Only the person's own file:
 * a repository's settings never set what a task may spend. A missing file or key is no budget; a
 * value that is not a positive number is a problem to tell (and no budget). Never throws.
 */
export function readUserMaxBudget(path: string = userSettingsPath()): { capUsd: number | undefined; problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    // A missing or unreadable file is reported where passEnv reads the same file.
    return { capUsd: undefined, problems: [] };
  }
  const value = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).maxBudgetUsd : undefined;
  if (value === undefined || value === null) return { capUsd: undefined, problems: [] };
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    return { capUsd: undefined, problems: [`${path}: maxBudgetUsd must be a positive number of US dollars (got ${JSON.stringify(value)}); no budget is set from it`] };
  }
  return { capUsd: value, problems: [] };
}
