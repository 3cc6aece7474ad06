import * as vscode from 'vscode';
import { settingsDefaultMode } from '../core/permissions/settings';
import { windowTrustView } from './trust/windowTrust';
import type { ProviderConfig } from '../core/providers/types';
import type { PermissionMode } from '../shared/domain/permissionModes';
import type { ChatConfig } from '../shared/protocol/toWebview';
import {
  type KeelSettings,
  type KeyedProviderId,
  SECRET_KEYS,
  chatConfigOf,
  defaultModeSetting,
  permissionModeOf,
  providerOf,
  resolveProviderConfig,
} from './providerConfig';

/** Reads the `keel.*` settings as they are now. */
export function readKeelSettings(): KeelSettings {
  const c = vscode.workspace.getConfiguration('keel');
  return {
    provider: c.get('provider'),
    model: c.get('model'),
    planModel: c.get('planModel'),
    anthropicBaseUrl: c.get('anthropic.baseUrl'),
    openaiBaseUrl: c.get('openai.baseUrl'),
    defaultMode: defaultModeSetting(c.inspect('permissions.defaultMode'), filesDefaultMode, warnOnce),
    // The person's own (user settings only): how long their model server may take is theirs to
    // say, not a cloned repository's (one second would give up every answer, an hour hang a task).
    stallSeconds: c.inspect('timeouts.stallSeconds')?.globalValue,
    responseSeconds: c.inspect('timeouts.responseSeconds')?.globalValue,
  };
}

/** Notices already shown in this window (a file's ignored defaultMode is said once). */
const shownNotices = new Set<string>();

/**
 * The settings files' `defaultMode` for the first workspace folder (`.claude/`, `.keel/`, and
 * `~/.keel/settings.json`); a workspace file's looser mode is ignored with a warning.
 */
function filesDefaultMode(): PermissionMode | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) return undefined;
  // A workspace's looser mode applies only once the person approved it (docs/permissions.md, "Trust").
  const settled = settingsDefaultMode(folder, windowTrustView());
  for (const n of settled.notices) warnOnce(n);
  return settled.mode;
}

/** A warning the person sees once per window (settings are read on every run). */
function warnOnce(message: string): void {
  if (shownNotices.has(message)) return;
  shownNotices.add(message);
  void vscode.window.showWarningMessage(`Keel: ${message}`);
}

/**
 * Settings + SecretStorage (+ environment fallback) → the `ProviderConfig` a run in `mode` starts
 * with. Reads the secret only when called (i.e. when a task starts), never at activation.
 */
export async function readProviderConfig(secrets: vscode.SecretStorage, mode?: PermissionMode): Promise<ProviderConfig> {
  const settings = readKeelSettings();
  const provider = providerOf(settings);
  const secret = provider === 'demo' ? undefined : await secrets.get(SECRET_KEYS[provider]);
  // A timeout setting that cannot be used is said (once per window), and its default applies.
  return resolveProviderConfig(settings, secret, process.env, mode, warnOnce);
}

/** What the chat header shows, for the chat's mode `mode`. */
export function readChatConfig(mode?: PermissionMode): ChatConfig {
  return chatConfigOf(readKeelSettings(), process.env, mode);
}

export function readPermissionMode(): PermissionMode {
  return permissionModeOf(readKeelSettings());
}

/** Stores (or, with an empty key, deletes) a provider's API key. The key is never logged. */
export async function storeApiKey(secrets: vscode.SecretStorage, provider: KeyedProviderId, key: string): Promise<void> {
  if (key) await secrets.store(SECRET_KEYS[provider], key);
  else await secrets.delete(SECRET_KEYS[provider]);
}
