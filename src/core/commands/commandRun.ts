import type { CommandNarrowing } from './narrowing';

/**
 * What a custom slash command asks of the run that answers it (docs/commands.md): its
 * `allowed-tools` narrow that run's permissions (never widen them), its `model` is that run's
 * model. Both end with the run.
 */
export interface CommandRun {
  narrowing?: CommandNarrowing;
  /** A model id or alias (`haiku`); the task's model comes back after the run. */
  model?: string;
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
