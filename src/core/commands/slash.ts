import type { CommandCatalog, CustomCommand } from './catalog';

/**
 * What a message that starts with `/` is (docs/commands.md). Built-ins win over custom commands
 * (a repository cannot redefine /clear); `/mcp__server__prompt` is an MCP prompt (expanded by
 * the MCP hub); a first word with another `/` in it (`/usr/bin/env is broken`) is text. A name
 * no command has is an error for the person, never sent to the model as a prompt. Pure.
 */
export const BUILTIN_COMMANDS = [
  { name: 'clear', argumentHint: '', description: 'Start a new task (the current one stays in History)' },
  { name: 'compact', argumentHint: '[instructions]', description: 'Summarise the conversation so far to free context' },
  { name: 'model', argumentHint: '[model]', description: 'Show or change the model of this task' },
  { name: 'mode', argumentHint: '[default|acceptEdits|plan|dontAsk|bypassPermissions]', description: 'Show or change the permission mode' },
  { name: 'cost', argumentHint: '', description: "Show this task's tokens, cost and budget" },
  { name: 'memory', argumentHint: '', description: 'Show the instructions files and memories Keel reads here' },
  { name: 'help', argumentHint: '', description: 'List the slash commands' },
] as const;

export type BuiltinName = (typeof BUILTIN_COMMANDS)[number]['name'] | 'rewind';

/** `/rewind` is offered once the host can rewind a task (a later change); until then it is unknown. */
export const REWIND_COMMAND = { name: 'rewind', argumentHint: '[checkpoint]', description: 'Go back to an earlier point of this task' } as const;

export type SlashParse =
  | { kind: 'text' }
  | { kind: 'mcp' }
  | { kind: 'builtin'; name: BuiltinName; args: string }
  | { kind: 'custom'; command: CustomCommand; args: string }
  | { kind: 'held'; command: CustomCommand }
  | { kind: 'ambiguous'; name: string; candidates: CustomCommand[] }
  | { kind: 'unknown'; name: string; suggestions: string[] };

const COMMAND_WORD = /^\/([A-Za-z0-9_][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$/;

export function resolveSlash(text: string, catalog: Pick<CommandCatalog, 'commands' | 'held'>, opts: { rewind?: boolean } = {}): SlashParse {
  const trimmed = text.trim();
  if (!trimmed.startsWith('/')) return { kind: 'text' };
  const m = COMMAND_WORD.exec(trimmed);
  if (!m) return { kind: 'text' };
  const name = m[1]!;
  const args = (m[2] ?? '').trim();
  if (name.startsWith('mcp__')) return { kind: 'mcp' };
  if (BUILTIN_COMMANDS.some((b) => b.name === name) || (opts.rewind && name === 'rewind')) return { kind: 'builtin', name: name as BuiltinName, args };
  const exact = catalog.commands.find((c) => c.qualified === name);
  if (exact) return { kind: 'custom', command: exact, args };
  const byName = catalog.commands.filter((c) => c.name === name);
  if (byName.length === 1) return { kind: 'custom', command: byName[0]!, args };
  if (byName.length > 1) return { kind: 'ambiguous', name, candidates: byName };
  const held = catalog.held.find((c) => c.qualified === name || c.name === name);
  if (held) return { kind: 'held', command: held };
  const lower = name.toLowerCase();
  const names = [...BUILTIN_COMMANDS.map((b) => b.name), ...catalog.commands.map((c) => c.qualified)];
  const suggestions = names.filter((n) => n.toLowerCase().includes(lower) || lower.includes(n.toLowerCase())).slice(0, 5);
  return { kind: 'unknown', name, suggestions };
}

/** What the person reads when a `/` message cannot run (null when it can). */
export function slashProblem(p: SlashParse, approveHint: string): string | null {
  switch (p.kind) {
    case 'unknown':
      return `There is no command /${p.name}${p.suggestions.length ? ` (did you mean ${p.suggestions.map((s) => `/${s}`).join(', ')}?)` : ''}; type / to see the commands. Nothing was sent.`;
    case 'ambiguous':
      return `/${p.name} names ${p.candidates.length} commands: ${p.candidates.map((c) => `/${c.qualified} (${c.display})`).join(', ')}. Say which. Nothing was sent.`;
    case 'held':
      return `/${p.command.qualified} is a command of this workspace (${p.command.display}) that you have not approved yet; ${approveHint}. Nothing was sent.`;
    default:
      return null;
  }
}

/** One line per command for `/help` and `keel commands`: built-ins, then the custom ones. */
export function helpLines(catalog: Pick<CommandCatalog, 'commands' | 'held'>, opts: { rewind?: boolean } = {}): string[] {
  const builtins = [...BUILTIN_COMMANDS, ...(opts.rewind ? [REWIND_COMMAND] : [])];
  const lines = builtins.map((b) => `/${b.name}${b.argumentHint ? ` ${b.argumentHint}` : ''} — ${b.description}`);
  for (const c of catalog.commands) lines.push(`/${c.qualified}${c.argumentHint ? ` ${c.argumentHint}` : ''} — ${c.description || '(no description)'} (${c.scope}: ${c.display})`);
  for (const c of catalog.held) lines.push(`/${c.qualified} — held back until you approve this workspace (${c.display})`);
  return lines;
}
