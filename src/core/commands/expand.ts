import type { CustomCommand } from './catalog';

/**
 * A command's prompt with its arguments, as Claude Code fills them in:
 * - `$ARGUMENTS`: everything after the command's name, as typed;
 * - `$1`, `$2`, …: the arguments one by one (split at spaces; "quoted words" stay one), '' when absent;
 * - `$ARGUMENTS[0]`, `$ARGUMENTS[1]`, …: the same, counted from 0;
 * - a body with none of these gets the arguments appended as `ARGUMENTS: …` (so they are never lost).
 * What Keel does not do is said in `notes`: it does not run the body's !`command` lines before the
 * prompt (a repository's text would run without the permission check: the model sees them as
 * text and runs what it needs through Bash and its permission check), and `@path` stays text
 * (the model reads the file with Read). Pure.
 */
export interface ExpandedCommand {
  prompt: string;
  notes: string[];
}

export function expandCommand(command: Pick<CustomCommand, 'body' | 'qualified'>, args: string): ExpandedCommand {
  const words = splitArguments(args);
  const notes: string[] = [];
  let used = false;
  let prompt = command.body.replace(/\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)/g, (_m, index0: string | undefined, index1: string | undefined) => {
    used = true;
    if (index0 !== undefined) return words[Number(index0)] ?? '';
    if (index1 !== undefined) return Number(index1) >= 1 ? (words[Number(index1) - 1] ?? '') : '';
    return args;
  });
  if (!used && args.trim()) prompt = `${prompt.trimEnd()}\n\nARGUMENTS: ${args}`;
  if (/!`[^`\n]+`/.test(command.body)) {
    notes.push(`/${command.qualified} has !\`…\` lines: Keel does not run them before the prompt; the model sees them as text and runs what it needs through Bash (and its permission check)`);
  }
  return { prompt: prompt.trim(), notes };
}

/** The arguments one by one: split at whitespace, with "double" or 'single' quotes grouping words. */
export function splitArguments(args: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: string | null = null;
  for (const ch of args) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
      continue;
    }
    if (/\s/.test(ch)) {
      if (has) out.push(cur);
      cur = '';
      has = false;
      continue;
    }
    cur += ch;
    has = true;
  }
  if (has) out.push(cur);
  return out;
}
