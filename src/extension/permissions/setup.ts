import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { parseRule } from '../../core/permissions/rules';
import type { SandboxSettings } from '../../core/permissions/sandbox';
import type { RuleScope } from '../../shared/protocol/chatMessages';
import type { Logger } from '../logger';
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
export function createPermissionPrompts(context: vscode.ExtensionContext, log: Logger): PermissionPrompts {
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
      const { saveRule } = await import('../../core/permissions/persist');
      await saveRule(rules, where, { workspace: folder?.uri.fsPath ?? homedir() });
    },
  };
}

/**
 * The sandbox option for the task runtime from `keel.sandbox.enabled`. When it is on and bubblewrap
 * cannot run here, says so clearly (a warning with the reason and the fix): Bash commands are then
 * refused rather than run outside the sandbox.
 */
export async function sandboxSettings(log: Logger): Promise<SandboxSettings> {
  const enabled = vscode.workspace.getConfiguration('keel').get<boolean>('sandbox.enabled') === true;
  if (!enabled) return { enabled: false };
  const { detectSandbox } = await import('../../core/permissions/sandbox');
  const avail = detectSandbox();
  if (avail.available) {
    log.info(`sandbox on: Bash runs inside bubblewrap (${avail.bwrap})`);
  } else {
    log.warn(`sandbox on but unavailable: ${avail.reason}`);
    void vscode.window.showWarningMessage(
      `Keel: the sandbox is on (keel.sandbox.enabled) but cannot run here: ${avail.reason}. Bash commands will not run until it is available or the setting is turned off.`,
    );
  }
  return { enabled: true };
}
