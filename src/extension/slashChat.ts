import { costLines, memoryLines } from '../core/commands/builtinText';
import { commandLabel, loadCommands, type CommandCatalog } from '../core/commands/catalog';
import { expandCommand } from '../core/commands/expand';
import type { ProjectContentGate } from '../core/commands/projectGate';
import { BUILTIN_COMMANDS, helpLines, resolveSlash, slashProblem } from '../core/commands/slash';
import type { MessageExtras, TaskHandle } from '../core/runtime/types';
import { NOTHING_APPROVED, type TrustView } from '../core/trust/items';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../shared/domain/permissionModes';
import type { SlashCommand } from '../shared/protocol/toWebview';

/**
 * Slash commands in the chat (docs/commands.md): what the `/` list offers, and what a message that
 * starts with `/` does — a custom command is expanded and sent with its allowed-tools and model;
 * a built-in acts on the chat (`/clear` a new task, `/mode`, `/model`, `/compact`) or says
 * something as a notice (`/cost`, `/memory`, `/help`); one that cannot run is a notice and
 * nothing is sent. Free of `vscode`: the extension gives it the workspace and the approvals.
 */
export interface ChatCommands {
  /** The workspace folder (undefined: no folder open, so only the person's own commands). */
  workspace(): string | undefined;
  home: string;
  gate: ProjectContentGate;
  /** What the person is told to do to approve a workspace's commands. */
  approveHint: string;
  /** The window's approvals of the workspace (`/memory` says which instructions files are held back). */
  trust?(): Promise<TrustView | undefined>;
}

/** What the chat does with a typed message. */
export type ChatSlash = { kind: 'send'; text: string; extras: MessageExtras } | { kind: 'handled' };

/** What a surface lets a built-in do. */
export interface SlashSurface {
  current(): TaskHandle | undefined;
  newTask(): void;
  setMode(mode: PermissionMode): void;
  mode(): PermissionMode;
  notice(message: string): void;
  /** Opens the model picker (Keel: Select Model). */
  selectModel?(): void;
}

/** A task that can change its model and compact its conversation (the live ones can). */
type CapableTask = TaskHandle & { setModel?(model: string): void; model?(): string; compact?(instructions: string): Promise<string> };

export function catalogOf(commands: ChatCommands): CommandCatalog {
  const workspace = commands.workspace();
  if (!workspace) return { commands: [], held: [], problems: [] };
  return loadCommands({ workspace, home: commands.home, gate: commands.gate });
}

/** The built-ins and the workspace's commands whose name or description contains `query`, at most `max`. */
export function chatSlashCommands(commands: ChatCommands, query: string, max: number): SlashCommand[] {
  const q = query.toLowerCase();
  const hit = (name: string, description: string) => name.toLowerCase().includes(q) || description.toLowerCase().includes(q);
  const out: SlashCommand[] = [];
  for (const b of BUILTIN_COMMANDS) {
    if (hit(b.name, b.description)) out.push({ name: b.name, description: b.description, arguments: [], ...(b.argumentHint ? { hint: b.argumentHint } : {}), source: 'built-in' });
  }
  for (const c of catalogOf(commands).commands) {
    if (!hit(c.qualified, c.description)) continue;
    out.push({ name: c.qualified, description: c.description.slice(0, 400), arguments: [], ...(c.argumentHint ? { hint: c.argumentHint.slice(0, 200) } : {}), source: commandLabel(c) });
  }
  return out.slice(0, max);
}

/** What to do with `typed`: send it (expanded), or nothing more (a built-in acted, or a problem was said). */
export async function slashInChat(typed: string, commands: ChatCommands, surface: SlashSurface): Promise<ChatSlash> {
  if (!typed.trim().startsWith('/')) return { kind: 'send', text: typed, extras: {} };
  const catalog = catalogOf(commands);
  const parsed = resolveSlash(typed, catalog);
  const problem = slashProblem(parsed, commands.approveHint);
  if (problem) {
    surface.notice(`${problem} You typed: ${typed.slice(0, 500)}`);
    return { kind: 'handled' };
  }
  if (parsed.kind === 'text' || parsed.kind === 'mcp') return { kind: 'send', text: typed, extras: {} };
  if (parsed.kind === 'custom') {
    const c = parsed.command;
    const expanded = expandCommand(c, parsed.args);
    for (const n of expanded.notes) surface.notice(n);
    const command = { ...(c.allowedTools ? { narrowing: { command: `/${c.qualified}`, rules: c.allowedTools } } : {}), ...(c.model ? { model: c.model } : {}) };
    return { kind: 'send', text: expanded.prompt, extras: command.narrowing || command.model ? { command } : {} };
  }
  if (parsed.kind !== 'builtin') return { kind: 'send', text: typed, extras: {} };
  const task = surface.current() as CapableTask | undefined;
  switch (parsed.name) {
    case 'clear':
      surface.newTask();
      break;
    case 'help':
      surface.notice(helpLines(catalog).join('\n'));
      break;
    case 'memory': {
      const ws = commands.workspace();
      const trust = (await commands.trust?.()) ?? NOTHING_APPROVED;
      surface.notice(ws ? memoryLines(ws, trust, commands.home).join('\n') : 'Open a folder: instructions files and memories belong to a workspace.');
      break;
    }
    case 'cost':
      surface.notice(task ? costLines(task.transcript()).join('\n') : 'No task is shown: /cost tells the cost of the task this chat shows.');
      break;
    case 'mode':
      if (!parsed.args) surface.notice(`Permission mode: ${surface.mode()}`);
      else if (!isPermissionMode(parsed.args)) surface.notice(`/mode takes one of ${PERMISSION_MODES.join(', ')} (got "${parsed.args}").`);
      else {
        surface.setMode(parsed.args);
        surface.notice(`Permission mode: ${parsed.args}`);
      }
      break;
    case 'model':
      if (!parsed.args) {
        if (surface.selectModel) surface.selectModel();
        else surface.notice(`Model: ${task?.model?.() ?? task?.transcript().model ?? 'the configured one'}`);
      } else if (task?.setModel) {
        task.setModel(parsed.args);
        surface.notice(`This task uses ${parsed.args} from its next message on.`);
      } else surface.notice('No live task is shown: choose the model of new tasks with Keel: Select Model.');
      break;
    case 'compact':
      if (!task?.compact) surface.notice('No live task is shown: /compact summarises the conversation of the task this chat shows.');
      else surface.notice(await task.compact(parsed.args));
      break;
    default:
      surface.notice(`/${parsed.name} is not available yet.`);
  }
  return { kind: 'handled' };
}
