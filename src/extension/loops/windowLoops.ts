import { errorMessage } from '../../shared/domain/errors';
import * as vscode from 'vscode';
import type { StoredLoopSettings } from '../../core/loop/files';
import type { LoopTaskHost, LoopTrust } from '../../core/loop/runner';
import type { ActivityFeed } from '../../core/events/activityFeed';
import type { LoopStatus } from '../../shared/domain/loop';
import type { LoopAction, LoopsState } from '../../shared/protocol/loopMessages';
import { type Logger } from '../logger';
import type { LoopChat } from './loopRequests';
import type { LoopRegistry } from './loopRegistry';

export interface WindowLoopsOptions {
  log: Logger;
  taskHost(): Promise<LoopTaskHost>;
  /** Why a loop cannot run in the chat's mode now (Plan mode), asked before Start Loop's questions. */
  loopModeProblem(): string | undefined;
  feed(): ActivityFeed | undefined;
  /** Shows the loop page (in the chat the person sees), selecting loop `name` when given. */
  showPage(name?: string): Promise<void>;
  /** The window's approvals of its workspace (loop folders run only as approved or as Keel wrote them). */
  trust(): Promise<LoopTrust | undefined>;
}

/**
 * The loops of this window in VS Code (docs/loop.md, "In VS Code"): "Keel: Start Loop", the loop
 * page's actions, the progress notification of each run (cancellable), the notifications when a
 * loop completes or stalls, and the offer to continue loops a reload interrupted. The registry
 * (vscode-free) holds the loops; this file only shows them. The core is imported on first use.
 */
export class WindowLoops implements LoopChat {
  private registry: LoopRegistry | undefined;
  private loading: Promise<LoopRegistry | undefined> | undefined;
  private readonly changeListeners = new Set<() => void>();
  private disposed = false;

  constructor(private readonly o: WindowLoopsOptions) {}

  /** The registry of the window's first folder; undefined when no folder is open. */
  private load(): Promise<LoopRegistry | undefined> {
    this.loading ??= (async () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder || folder.uri.scheme !== 'file') return undefined;
      const { LoopRegistry } = await import('./loopRegistry');
      if (this.disposed) return undefined;
      const registry = new LoopRegistry({
        workspace: folder.uri.fsPath,
        taskHost: () => this.o.taskHost(),
        feed: () => this.o.feed(),
        owner: `VS Code window ${process.pid}`,
        log: this.o.log,
        trust: () => this.o.trust(),
        confirm: async (message, detail) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Restore Files')) === 'Restore Files',
      });
      registry.onChange(() => this.changeListeners.forEach((l) => l()));
      registry.onEvent((e) => {
        if (e.state === 'judged') this.o.log.info(`loop ${e.name}: iteration ${e.iteration} judged ${e.verdict}: ${e.reasons.join('; ')}`);
      });
      this.registry = registry;
      // A page that asked before the registry existed gets the loops on disk now.
      this.changeListeners.forEach((l) => l());
      return registry;
    })();
    return this.loading;
  }

  state(): LoopsState {
    if (this.registry) return this.registry.state();
    void this.load();
    return { loops: [], problems: [], available: vscode.workspace.workspaceFolders?.[0]?.uri.scheme === 'file' };
  }

  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  async act(action: LoopAction, name: string, commit?: string): Promise<string> {
    const registry = await this.load();
    if (!registry) throw new Error('open a folder first: loops work inside a workspace folder');
    switch (action) {
      case 'cancel':
        return registry.cancel(name);
      case 'continue':
        this.follow(name, registry.continue(name));
        return `Loop "${name}" continues.`;
      case 'restore':
        if (!commit) throw new Error('which checkpoint? (no commit given)');
        return registry.restore(name, commit);
    }
  }

  /** "Keel: Start Loop": asks for the goal, max iterations, promise and stop word, then runs the loop here. */
  async start(): Promise<void> {
    const registry = await this.load();
    if (!registry) {
      void vscode.window.showErrorMessage('Keel: open a folder first: a loop works inside a workspace folder.');
      return;
    }
    // Asked before the questions: Plan mode would refuse every change of every iteration.
    const modeProblem = this.o.loopModeProblem();
    if (modeProblem) {
      void vscode.window.showErrorMessage(`Keel: ${modeProblem}`);
      return;
    }
    const settings = await askLoopSettings();
    if (!settings) return;
    let started: { name: string; done: Promise<LoopStatus> };
    try {
      started = await registry.start(settings.goal, settings.settings);
    } catch (err) {
      this.o.log.warn(`starting a loop failed: ${errorMessage(err)}`);
      void vscode.window.showErrorMessage(`Keel could not start the loop: ${errorMessage(err)}`);
      return;
    }
    this.o.log.info(`loop ${started.name} started (at most ${settings.settings.maxIterations} iterations)`);
    void vscode.window.showInformationMessage(`Keel loop "${started.name}" started: each iteration is a task of the chat.`, 'Show Loop').then((c) => {
      if (c === 'Show Loop') void this.o.showPage(started.name);
    });
    this.follow(started.name, started.done);
  }

  /** "Keel: Show Loop" (palette, Agents view, notifications): the loop page, with `name` selected. */
  async show(name?: string): Promise<void> {
    await this.load();
    await this.o.showPage(name);
  }

  /**
   * After activation: loops of this workspace whose state.json says they run but that nobody drives
   * were cut off by a reload (or a crash). Each is offered, not continued by itself: an iteration
   * spends money and runs commands, and a person who reloaded may have meant to stop. Never throws.
   */
  async offerInterrupted(): Promise<void> {
    let found: Array<{ name: string; iteration: number }> = [];
    try {
      const registry = await this.load();
      found = registry?.interrupted() ?? [];
    } catch (err) {
      this.o.log.warn(`looking for interrupted loops failed: ${errorMessage(err)}`);
    }
    for (const l of found) {
      void vscode.window.showWarningMessage(`Keel loop "${l.name}" was interrupted at iteration ${l.iteration}.`, 'Continue', 'Show').then((choice) => {
        if (choice === 'Show') void this.show(l.name);
        if (choice === 'Continue') void this.act('continue', l.name).catch((err: unknown) => void vscode.window.showErrorMessage(`Keel could not continue loop "${l.name}": ${errorMessage(err)}`));
      });
    }
  }

  dispose(): void {
    this.disposed = true;
    this.registry?.dispose();
    this.changeListeners.clear();
  }

  /** A cancellable progress notification while the run goes on; then how it ended, with Show Loop. */
  private follow(name: string, done: Promise<LoopStatus>): void {
    const registry = this.registry;
    if (!registry) return;
    void vscode.window
      .withProgress({ location: vscode.ProgressLocation.Notification, title: `Keel loop "${name}"`, cancellable: true }, (progress, token) => {
        token.onCancellationRequested(() => {
          try {
            registry.cancel(name);
          } catch (err) {
            this.o.log.warn(`cancelling loop ${name}: ${errorMessage(err)}`);
          }
        });
        const off = registry.onEvent((e) => {
          if (e.name !== name) return;
          if (e.state === 'iteration') progress.report({ message: `iteration ${e.iteration}` });
          if (e.state === 'judged') progress.report({ message: `iteration ${e.iteration}: ${e.verdict}` });
        });
        return done.finally(off);
      })
      .then(
        (status) => this.ended(name, status),
        (err: unknown) => {
          this.o.log.warn(`loop ${name} failed: ${errorMessage(err)}`);
          void vscode.window.showErrorMessage(`Keel loop "${name}": ${errorMessage(err)}`);
        },
      );
  }

  private ended(name: string, status: LoopStatus): void {
    if (this.disposed) return;
    const view = this.registry?.state().loops.find((l) => l.name === name);
    const reasons = view?.reasons.join('; ') ?? '';
    if (status === 'complete') {
      void vscode.window.showInformationMessage(`Keel loop "${name}" complete after ${view?.iteration ?? '?'} iterations: ${reasons}`, 'Show Loop').then((c) => {
        if (c === 'Show Loop') void this.show(name);
      });
    } else if (status === 'stopped') {
      // Not a success: the loop used every iteration it was allowed and the goal is not reached.
      void vscode.window.showWarningMessage(`Keel loop "${name}" stopped: iteration limit reached after ${view?.iteration ?? '?'} iterations; the goal is not reached.`, 'Show Loop').then((c) => {
        if (c === 'Show Loop') void this.show(name);
      });
    } else if (status === 'stalled') {
      // The loop's attention notification: it waits for the person (docs/loop.md, "stalled").
      const message = `Keel loop "${name}" stalled after ${view?.iteration ?? '?'} iterations and needs you: ${reasons}. Edit its anchor, progress or guardrails (.keel/loop/${name}/), then continue.`;
      void vscode.window.showWarningMessage(message, 'Continue', 'Show Loop', 'Cancel Loop').then((choice) => {
        if (choice === 'Show Loop') void this.show(name);
        if (choice === 'Continue') void this.act('continue', name).catch((err: unknown) => void vscode.window.showErrorMessage(`Keel could not continue loop "${name}": ${errorMessage(err)}`));
        if (choice === 'Cancel Loop') void this.act('cancel', name).catch((err: unknown) => void vscode.window.showErrorMessage(errorMessage(err)));
      });
    }
  }
}

/** The four questions of "Keel: Start Loop"; undefined when the person escapes one. */
async function askLoopSettings(): Promise<{ goal: string; settings: StoredLoopSettings } | undefined> {
  const goal = (await vscode.window.showInputBox({ title: 'Keel: Start Loop (1/4)', prompt: 'The goal the loop works toward', placeHolder: 'make every test pass', ignoreFocusOut: true }))?.trim();
  if (!goal) return undefined;
  const max = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (2/4)',
    prompt: 'At most this many iterations',
    value: '50',
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 10_000 ? undefined : 'a whole number from 1 to 10000'),
  });
  if (max === undefined) return undefined;
  const promise = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (3/4)',
    prompt: 'Optional: complete when the final message says <promise>TEXT</promise>',
    placeHolder: 'leave empty for none',
    ignoreFocusOut: true,
  });
  if (promise === undefined) return undefined;
  const stopWord = await vscode.window.showInputBox({
    title: 'Keel: Start Loop (4/4)',
    prompt: 'The stop word that marks the goal done in progress.md',
    value: 'DONE',
    ignoreFocusOut: true,
    validateInput: (v) => (/^\S{2,64}$/.test(v.trim()) ? undefined : 'one word of 2 to 64 characters'),
  });
  if (stopWord === undefined) return undefined;
  const checkpoints = vscode.workspace.getConfiguration('keel').get<boolean>('loop.checkpoints') === true;
  return { goal, settings: { maxIterations: Number(max), stopWord: stopWord.trim(), checkpoints, ...(promise.trim() ? { promise: promise.trim() } : {}) } };
}
