import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { parseRule } from '../../core/permissions/rules';
import type { SandboxSettings } from '../../core/sandbox/settings';
import type { RuleScope } from '../../shared/protocol/chatMessages';
import type { Logger } from '../logger';
import type { WorkspaceTrust } from '../../core/trust/workspaceTrust';
import type { PromptSurface } from '../permissionBroker';
import type { RuleCheck } from './alwaysAllow';
import { DiffPrompt } from './diffPrompt';
import { ModalPrompt } from './modalPrompt';

/** What the chat controller gets from the extension for permission prompts. */
export interface PermissionPrompts {
  surfaces: PromptSurface[];
  saveRules(rules: string[], where: RuleScope): Promise<void>;
  checkRule: RuleCheck;
  /** The diff editor prompt (so "Open diff" on a pending card reveals it). */
  diff: DiffPrompt;
}

/**
 * Creates the editor-side prompts (diff editor for edits, modal for risky calls) and the rule
 * saving of "Always allow". The core's persistence module is imported on the first save, never at
 * activation. Everything is disposed through `context`.
 */
export function createPermissionPrompts(context: vscode.ExtensionContext, log: Logger, trust: () => Promise<WorkspaceTrust | undefined>): PermissionPrompts {
  const diff = new DiffPrompt(log);
  context.subscriptions.push(diff);
  return {
    surfaces: [diff, new ModalPrompt()],
    diff,
    checkRule: (rule) => {
      const p = parseRule(rule);
      return p.ok ? undefined : p.error;
    },
    async saveRules(rules, where) {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (where !== 'user' && (!folder || folder.uri.scheme !== 'file')) throw new Error('no workspace folder is open to hold .keel/settings files');
      // The person's own rules: recorded as approved, so a workspace file holding them is not a question.
      const { saveApprovedRules } = await import('../../core/trust/savedRules');
      await saveApprovedRules(rules, where, { workspace: folder?.uri.fsPath ?? homedir(), trust: (await trust()) ?? null });
    },
  };
}

/**
 * The sandbox option for the task runtime: `keel.sandbox.enabled` and
 * `keel.sandbox.network.allowedDomains` (user values; a workspace may only turn the sandbox on)
 * merged with the `sandbox` sections of the settings files (docs/permissions.md, "Sandbox").
 * Problems (a project trying to widen it, a bad domain) are logged. When the sandbox is on and
 * bubblewrap cannot run here, says so clearly (a warning with the reason and the fix): Bash
 * commands are then refused rather than run outside the sandbox.
 */
export async function sandboxSettings(log: Logger, workspace: string): Promise<SandboxSettings> {
  const config = vscode.workspace.getConfiguration('keel');
  const [{ loadSandboxSettings }, { vscodeSandboxLayers }] = await Promise.all([import('../../core/sandbox/settings'), import('../sandboxConfig')]);
  const problems: string[] = [];
  const extra = vscodeSandboxLayers(config.inspect('sandbox.enabled'), config.inspect('sandbox.network.allowedDomains'), problems);
  const { settings } = loadSandboxSettings({ workspace, extra, problems });
  for (const p of problems) log.warn(`sandbox settings: ${p}`);
  if (!settings.enabled) return settings;
  const { detectSandbox } = await import('../../core/sandbox/bwrap');
  const avail = detectSandbox();
  const network = settings.network?.allowedDomains?.length ? `network only to ${settings.network.allowedDomains.join(', ')}` : 'no network';
  if (avail.available) {
    log.info(`sandbox on: Bash runs inside bubblewrap (${avail.bwrap}), ${network}`);
  } else {
    log.warn(`sandbox on but unavailable: ${avail.reason}`);
    void vscode.window.showWarningMessage(
      `Keel: the sandbox is on (keel.sandbox.enabled) but cannot run here: ${avail.reason}. Bash commands will not run until it is available or the setting is turned off.`,
    );
  }
  return settings;
}
