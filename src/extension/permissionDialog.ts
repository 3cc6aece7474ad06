import * as vscode from 'vscode';
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from '../core/permissions/gate';
import type { Logger } from './logger';

/**
 * The notification prompt: while no chat view can show the card (the view is hidden or closed),
 * the broker also shows the request as a VS Code notification with Allow / Deny (same request id;
 * the first answer anywhere wins and withdraws the others). Dismissing it counts as deny; the
 * task cancelling the request (signal) withdraws it. The answer is logged with the request id;
 * the input itself is not (it may hold secrets the model read).
 */
export function notificationAsker(log: Logger): PermissionAsker {
  return {
    ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> {
      return new Promise<PermissionAnswer>((resolve) => {
        let settled = false;
        const finish = (answer: PermissionAnswer) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', onAbort);
          log.info(`permission ${request.requestId} (${request.tool}): ${answer.decision}`);
          resolve(answer);
        };
        const onAbort = () => finish({ decision: 'deny', feedback: 'The request was cancelled.' });
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort);
        const summary = request.subject.summary || request.tool;
        void vscode.window
          .showWarningMessage(`Keel wants to run ${request.tool}: ${summary}`, { detail: request.reason }, 'Allow', 'Deny')
          .then(
            (choice) => finish(choice === 'Allow' ? { decision: 'allow' } : { decision: 'deny', feedback: 'The user denied this.' }),
            () => finish({ decision: 'deny', feedback: 'The permission prompt failed.' }),
          );
      });
    },
  };
}
