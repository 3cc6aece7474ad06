import { homedir } from 'node:os';
import { costLines, memoryLines } from '../core/commands/builtinText';
import { NOTHING_APPROVED, type TrustView } from '../core/trust/items';
import { loadCommands } from '../core/commands/catalog';
import { expandCommand } from '../core/commands/expand';
import type { ProjectContentGate } from '../core/commands/projectGate';
import { helpLines, resolveSlash, slashProblem } from '../core/commands/slash';
import { TaskStore } from '../core/store/taskStore';
import type { CommandRun } from '../core/runtime/types';
import type { RunArgs } from './args';

/**
 * `keel run "/name args"` (docs/commands.md): a custom command becomes the run's prompt, with its
 * allowed-tools and model for that run; a built-in that only tells something (`/help`, `/cost`,
 * `/memory`, `/model`, `/mode`) prints and ends the run with no task; `/clear` and `/compact`
 * say what they are in a one-shot run. A command that cannot run is a usage error: nothing is sent.
 */
export type SlashOutcome =
  | { kind: 'prompt'; prompt: string; command?: CommandRun }
  | { kind: 'printed'; lines: string[] }
  | { kind: 'usage'; message: string };

export async function slashForRun(args: RunArgs, gate: ProjectContentGate, approveHint: string, log: (line: string) => void, trust: TrustView = NOTHING_APPROVED): Promise<SlashOutcome> {
  const prompt = args.prompt;
  const catalog = loadCommands({ workspace: args.workspace, home: homedir(), gate });
  const parsed = resolveSlash(prompt, catalog);
  const problem = slashProblem(parsed, approveHint);
  if (problem) return { kind: 'usage', message: problem };
  if (parsed.kind === 'text' || parsed.kind === 'mcp') return { kind: 'prompt', prompt };
  if (parsed.kind === 'custom') {
    for (const p of [...catalog.problems, ...parsed.command.problems]) log(`keel: commands: ${p}\n`);
    const expanded = expandCommand(parsed.command, parsed.args);
    for (const n of expanded.notes) log(`keel: ${n}\n`);
    const c = parsed.command;
    const command: CommandRun = {
      ...(c.allowedTools ? { narrowing: { command: `/${c.qualified}`, rules: c.allowedTools } } : {}),
      ...(c.model ? { model: c.model } : {}),
    };
    return { kind: 'prompt', prompt: expanded.prompt, ...(command.narrowing || command.model ? { command } : {}) };
  }
  if (parsed.kind !== 'builtin') return { kind: 'prompt', prompt };
  switch (parsed.name) {
    case 'help':
      return { kind: 'printed', lines: helpLines(catalog) };
    case 'memory':
      return { kind: 'printed', lines: memoryLines(args.workspace, trust) };
    case 'cost': {
      if (!args.resume) return { kind: 'usage', message: '/cost tells the cost of a task: keel run --resume ID /cost' };
      const store = new TaskStore(args.storage);
      const loaded = await store.load(store.resolveId(args.resume));
      return { kind: 'printed', lines: costLines(loaded.replay.transcript) };
    }
    case 'model':
      if (parsed.args) return { kind: 'usage', message: `in keel run, choose the model with --model ${parsed.args}` };
      return { kind: 'printed', lines: [`Model: ${args.provider.model} (${args.provider.provider}); change it with --model NAME`] };
    case 'mode':
      if (parsed.args) return { kind: 'usage', message: `in keel run, choose the permission mode with --mode ${parsed.args}` };
      return { kind: 'printed', lines: [`Permission mode: ${args.mode}; change it with --mode MODE`] };
    case 'clear':
      return { kind: 'printed', lines: ['keel run starts a new task every time: there is nothing to clear.'] };
    case 'compact':
      return { kind: 'usage', message: 'keel run compacts a long conversation by itself; /compact is for the chat in VS Code' };
    default:
      return { kind: 'usage', message: `/${parsed.name} is not available in keel run` };
  }
}
