import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ENV_NAME } from './toolEnvironment';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The variables a person chose to pass to tool processes although Keel would remove them
 * (toolEnvironment.ts). They come only from places a cloned repository cannot write: the user's
 * own `~/.keel/settings.json` (`{"passEnv": ["NAME", …]}`), the CLI's `--pass-env NAME`, and the
 * application-scoped (user settings only) VS Code setting `keel.tools.passEnv`. A project's `.keel/` or `.claude/` files
 * are never read for this.
 */
export interface PassEnv {
  names: string[];
  /** What was wrong, for people (a bad name is left out, never guessed at). */
  problems: string[];
}

/** Keeps the valid names of `values` (environment variable names), reporting the rest. */
export function checkPassEnvNames(values: readonly unknown[], where: string): PassEnv {
  const names: string[] = [];
  const problems: string[] = [];
  for (const v of values) {
    if (typeof v === 'string' && ENV_NAME.test(v)) {
      if (!names.includes(v)) names.push(v);
    } else problems.push(`${where}: ${JSON.stringify(v)} is not an environment variable name; it is ignored`);
  }
  return { names, problems };
}

/** The user settings file Keel reads `passEnv` from: `~/.keel/settings.json` under `home`. */
export function userSettingsPath(home: string = homedir()): string {
  return join(home, '.keel', 'settings.json');
}

/**
 * `passEnv` of the user settings file. A missing file or key is no names; a file that is not JSON,
 * or a `passEnv` that is not a list of names, is reported and passes nothing. Never throws.
 */
export function readUserPassEnv(path: string = userSettingsPath()): PassEnv {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { names: [], problems: [] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { names: [], problems: [`${path} is not JSON (${errorMessage(err)}); no variable is passed through`] };
  }
  const value = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).passEnv : undefined;
  if (value === undefined) return { names: [], problems: [] };
  if (!Array.isArray(value)) return { names: [], problems: [`${path}: passEnv must be a list of variable names; no variable is passed through`] };
  return checkPassEnvNames(value, `${path} passEnv`);
}
