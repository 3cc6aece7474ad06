import { checkPassEnvNames, readUserPassEnv, type PassEnv } from '../core/security/passEnv';
import { SecretKeeper } from '../core/security/secretKeeper';

/**
 * How `keel.tools.passEnv` was set, as `WorkspaceConfiguration.inspect` reports it. Only the
 * user's own value counts: the setting has application scope (a workspace cannot set it) and a value a
 * repository's `.vscode/settings.json` carries anyway is ignored here too.
 */
export interface PassEnvInspection {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The names from the setting (user value only) and from `passEnv` in ~/.keel/settings.json. Pure but for reading that file. */
export function passEnvOf(inspected: PassEnvInspection | undefined, userSettingsFile?: string): PassEnv {
  const fromSetting = Array.isArray(inspected?.globalValue) ? checkPassEnvNames(inspected.globalValue, 'keel.tools.passEnv') : { names: [], problems: [] };
  const inWorkspace = inspected?.workspaceValue !== undefined || inspected?.workspaceFolderValue !== undefined;
  const ignored = inWorkspace ? ['keel.tools.passEnv is set in workspace settings; only your user settings can pass variables to tools, so it is ignored'] : [];
  const fromFile = readUserPassEnv(userSettingsFile);
  return { names: [...new Set([...fromSetting.names, ...fromFile.names])], problems: [...ignored, ...fromSetting.problems, ...fromFile.problems] };
}

/**
 * The window's SecretKeeper: the keys in the extension host's environment and every key stored
 * in SecretStorage (whichever provider is selected now), and the names passed through.
 */
export async function toolSecrets(passEnv: readonly string[], storedKeys: Promise<string | undefined>[]): Promise<SecretKeeper> {
  const keeper = SecretKeeper.fromEnvironment(process.env, passEnv);
  for (const key of await Promise.all(storedKeys)) keeper.remember(key);
  return keeper;
}
