import { domainList, type SandboxLayer } from '../core/sandbox/settings';

/**
 * How a VS Code setting was set, as `WorkspaceConfiguration.inspect` reports it. Only the user's
 * own value may widen the sandbox; a value from the workspace (a repository's
 * `.vscode/settings.json`) is a project layer, which may only make it stricter.
 */
export interface SettingInspection {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The sandbox layers of VS Code's settings (`keel.sandbox.enabled`,
 * `keel.sandbox.network.allowedDomains`) for `mergeSandboxLayers`: the user's values are
 * trusted; workspace values can turn the sandbox on, and their domains are reported and ignored.
 * Pure; bad values are reported in `problems` and left out.
 */
export function vscodeSandboxLayers(enabled: SettingInspection | undefined, allowedDomains: SettingInspection | undefined, problems: string[]): SandboxLayer[] {
  const user: SandboxLayer = { source: 'VS Code user settings', trusted: true };
  if (typeof enabled?.globalValue === 'boolean') user.enabled = enabled.globalValue;
  const domains = domainList(allowedDomains?.globalValue, 'keel.sandbox.network.allowedDomains', problems);
  if (domains) user.allowedDomains = domains;
  const layers = [user];
  for (const [where, on, list] of [
    ['workspace settings', enabled?.workspaceValue, allowedDomains?.workspaceValue],
    ['workspace folder settings', enabled?.workspaceFolderValue, allowedDomains?.workspaceFolderValue],
  ] as const) {
    const layer: SandboxLayer = { source: `VS Code ${where}`, trusted: false };
    if (typeof on === 'boolean') layer.enabled = on;
    const d = domainList(list, `keel.sandbox.network.allowedDomains (${where})`, problems);
    if (d) layer.allowedDomains = d;
    layers.push(layer);
  }
  return layers;
}
