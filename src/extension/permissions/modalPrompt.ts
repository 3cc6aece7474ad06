import * as vscode from 'vscode';
import type { PermissionRequest } from '../../core/permissions/gate';
import type { PromptAnswer, PromptSurface } from '../permissionBroker';
import { riskyPromptText } from './riskyText';

/**
 * The modal dialog for risky calls (`risky: true`: a command that does not parse, `sudo`, writes
 * outside the workspace, network tools, leaving the sandbox). A modal cannot be closed from
 * code: when the request is answered elsewhere first, the dialog's late answer is ignored by the
 * broker. Dismissing it answers nothing (the card still waits).
 */
export class ModalPrompt implements PromptSurface {
  readonly source = 'dialog' as const;
  readonly when = 'atOnce' as const;

  applies(request: PermissionRequest): boolean {
    return request.risky === true;
  }

  async show(request: PermissionRequest, signal: AbortSignal): Promise<PromptAnswer | undefined> {
    if (signal.aborted) return undefined;
    const { message, detail } = riskyPromptText(request);
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Allow once', 'Deny');
    if (choice === 'Allow once') return { decision: 'allow' };
    if (choice === 'Deny') return { decision: 'deny', feedback: 'The user denied this.' };
    return undefined;
  }
}
