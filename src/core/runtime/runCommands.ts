import type { CommandRun } from './types';

/**
 * Which custom command (docs/commands.md) each run of a task answers, so that a command's
 * `allowed-tools` and `model` hold for exactly the run that answers it:
 * - a message sent when no run goes on names the next run's command (`forNextRun`);
 * - a message queued while a run goes on keeps its command (`queued`) until the queue is sent:
 *   the run that answers the queue takes the commands of the messages it sends (`combineCommands`),
 *   a withdrawn or returned message's command is dropped;
 * - the run takes its command when it starts (`take`, on its `initializing` state), after the
 *   last run's `done` (which ends that run's command) — a retry or a resume keeps the last one.
 */
export class RunCommands {
  private next: { command: CommandRun | undefined } | null = null;
  private last: CommandRun | undefined;
  private readonly byQueuedId = new Map<string, CommandRun>();

  /** The next run to start answers a message with `command` (undefined: a plain message). */
  forNextRun(command: CommandRun | undefined): void {
    this.next = { command };
  }

  /** Queued message `id` is a command's. */
  queued(id: string, command: CommandRun): void {
    this.byQueuedId.set(id, command);
  }

  /** Queued messages `ids` left the queue; `sent`: they are the next run's messages. */
  unqueued(ids: readonly string[], sent: boolean): void {
    const commands: CommandRun[] = [];
    for (const id of ids) {
      const c = this.byQueuedId.get(id);
      if (c) commands.push(c);
      this.byQueuedId.delete(id);
    }
    if (sent) this.next = { command: combineCommands(commands) };
  }

  /** A run starts: the command it answers (a retry or a resume: the last run's). */
  take(): CommandRun | undefined {
    if (this.next) {
      this.last = this.next.command;
      this.next = null;
    }
    return this.last;
  }
}

/**
 * One run answering several commands' messages may do only what every one of them allows: a
 * tool rule is kept when each narrowing command lists it exactly (never wider than any of them;
 * possibly narrower than their true intersection, which is safe). Its model is theirs when they
 * all name the same one, else the task's. Pure.
 */
export function combineCommands(commands: readonly CommandRun[]): CommandRun | undefined {
  if (commands.length <= 1) return commands[0];
  const narrowing = commands.flatMap((c) => (c.narrowing ? [c.narrowing] : []));
  const models = new Set(commands.map((c) => c.model));
  const model = models.size === 1 ? commands[0]!.model : undefined;
  const combined: CommandRun = { ...(model ? { model } : {}) };
  if (narrowing.length === 1) combined.narrowing = narrowing[0]!;
  if (narrowing.length > 1) {
    const [first, ...rest] = narrowing;
    combined.narrowing = { command: narrowing.map((n) => n.command).join(' and '), rules: first!.rules.filter((r) => rest.every((n) => n.rules.includes(r))) };
  }
  return combined;
}
