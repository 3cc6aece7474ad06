import * as vscode from 'vscode';
import type { ProcessActivity } from '../core/agents/processActivity';
import type { LoopEvent } from '../shared/domain/loop';
import type { ChatController } from './chatController';
import type { Logger } from './logger';

/**
 * "Keel: Start Loop" (docs/loop.md): asks for the goal, the maximum number of iterations, an
 * optional promise and the stop word, then runs the loop in this window. Each iteration is a task
 * of the chat (shown as it starts); a cancellable progress notification follows the loop, and the
 * Agents view shows it. A stalled loop asks the person to step in ("Continue" resumes it).
 * The loop panel is not built yet: the verdicts and reasons are in the notifications, the log and
 * `.keel/loop/<name>/state.json`.
 */
export async function startLoop(controller: ChatController, activity: () => ProcessActivity | undefined, log: Logger): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') {
    void vscode.window.showErrorMessage('Keel: open a folder first: a loop works inside a workspace folder.');
    return;
  }
  const goal = (await vscode.window.showInputBox({ title: 'Keel: Start Loop (1/4)', prompt: 'The goal the loop works toward', placeHolder: 'make every test pass', ignoreFocusOut: true }))?.trim();
  if (!goal) return;
  const max = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (2/4)',
    prompt: 'At most this many iterations',
    value: '50',
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 10_000 ? undefined : 'a whole number from 1 to 10000'),
  });
  if (max === undefined) return;
  const promise = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (3/4)',
    prompt: 'Optional: complete when the final message says <promise>TEXT</promise>',
    placeHolder: 'leave empty for none',
    ignoreFocusOut: true,
  });
  if (promise === undefined) return;
  const stopWord = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (4/4)',
    prompt: 'The stop word that marks the goal done in progress.md',
    value: 'DONE',
    ignoreFocusOut: true,
    validateInput: (v) => (/^\S{2,64}$/.test(v.trim()) ? undefined : 'one word of 2 to 64 characters'),
  });
  if (stopWord === undefined) return;

  const { LoopRunner } = await import('../core/loop/runner');
  const { defaultSettings, uniqueLoopName } = await import('../core/loop/files');
  let host: Awaited<ReturnType<ChatController['loopHost']>>;
  try {
    host = await controller.loopHost();
  } catch (err) {
    void vscode.window.showErrorMessage(`Keel could not start the loop: ${(err as Error).message}`);
    return;
  }
  const workspace = folder.uri.fsPath;
  const name = uniqueLoopName(workspace, goal);
  let report: (e: LoopEvent) => void = () => undefined;
  const runner = LoopRunner.create(
    {
      workspace,
      host,
      owner: `VS Code window ${process.pid}`,
      ...(activity() ? { feed: activity()!.feed } : {}),
      onEvent: (e) => {
        activity()?.feed.publish({ kind: 'loop', at: Date.now(), event: e });
        if (e.state === 'judged') log.info(`loop ${e.name}: iteration ${e.iteration} judged ${e.verdict}: ${e.reasons.join('; ')}`);
        report(e);
      },
      log: (level, message) => (level === 'error' ? log.error(message) : level === 'warn' ? log.warn(message) : log.info(message)),
    },
    name,
    goal,
    { ...defaultSettings(), maxIterations: Number(max), stopWord: stopWord.trim(), ...(promise.trim() ? { promise: promise.trim() } : {}) },
  );
  let status = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Keel loop "${name}"`, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => runner.cancel());
    report = (e) => {
      if (e.state === 'iteration') progress.report({ message: `iteration ${e.iteration}` });
      if (e.state === 'judged') progress.report({ message: `iteration ${e.iteration}: ${e.verdict}` });
    };
    return runner.run();
  });
  while (status === 'stalled') {
    const v = runner.view();
    const message = `Keel loop "${name}" stalled after ${v.iteration} iterations and needs you: ${v.reasons.join('; ')}. Edit its anchor, progress or guardrails (.keel/loop/${name}/), then continue.`;
    const choice = await vscode.window.showWarningMessage(message, 'Continue', 'Cancel Loop');
    if (choice !== 'Continue') {
      if (choice === 'Cancel Loop') runner.cancel();
      break;
    }
    status = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Keel loop "${name}"`, cancellable: true }, (_p, token) => {
      token.onCancellationRequested(() => runner.cancel());
      return runner.resume();
    });
  }
  if (status === 'complete') void vscode.window.showInformationMessage(`Keel loop "${name}" complete after ${runner.view().iteration} iterations: ${runner.view().reasons.join('; ')}`);
  if (status !== 'stalled') runner.dispose();
}
