import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { markdownFiles, readContentFile, type ContentRoot } from './contentFiles';
import { parseFrontmatter, textField, toolListField } from './frontmatter';
import { commandItem, type ContentItem, type ProjectContentGate } from './projectGate';

/**
 * Custom slash commands as Claude Code defines them (docs/commands.md): Markdown files in
 * `.claude/commands/` and `.keel/commands/` of the workspace (project) and of the person's home
 * (user). A file's name is the command's name (`review.md` → `/review`); a sub-folder is its
 * namespace (`frontend/review.md` → `/review`, shown as "project:frontend", and reachable as
 * `/frontend:review` when two share a name). The optional frontmatter says `description`,
 * `argument-hint`, `allowed-tools` and `model`.
 *
 * Where two define the same command, the person's own wins over the project's (as Claude Code
 * ranks personal over project), and `.keel/` over `.claude/` at the same level. A project's
 * commands are repository content: offered and run only once approved (`ProjectContentGate`);
 * the others are listed in `held`. Read fresh on every call; never throws.
 */
export type CommandScope = 'user' | 'project';

export interface CustomCommand {
  /** The file's name without `.md`: what the person types after `/`. */
  name: string;
  /** The sub-folders between the commands folder and the file, joined with `:` ('' for none). */
  namespace: string;
  /** `namespace:name`, or `name` without a namespace. */
  qualified: string;
  scope: CommandScope;
  path: string;
  /** As people read it: relative to the workspace, or `~/…`. */
  display: string;
  /** The frontmatter's, else the body's first line. */
  description: string;
  argumentHint: string;
  /** `allowed-tools`: rules that narrow what this command's run may do; undefined: no narrowing. */
  allowedTools: string[] | undefined;
  /** `model`: the model of this command's run; undefined: the task's. */
  model: string | undefined;
  /** The prompt template (the text after the frontmatter). */
  body: string;
  /** For a project command: what its approval is for. */
  item?: ContentItem;
  /** What was wrong with its frontmatter (the command is still usable). */
  problems: string[];
}

export interface CommandCatalog {
  /** The commands that can run, in precedence order (one per qualified name). */
  commands: CustomCommand[];
  /** A workspace's commands waiting for the person's approval (not offered, not run). */
  held: CustomCommand[];
  problems: string[];
}

export interface CatalogOptions {
  workspace: string;
  /** The person's home (default: the OS home). */
  home?: string;
  /** Approves a workspace's own commands. */
  gate: ProjectContentGate;
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const MAX_COMMANDS = 500;

/** The places commands are read from, highest precedence first. */
export function commandRoots(workspace: string, home: string): { root: ContentRoot; scope: CommandScope }[] {
  const ws = resolve(workspace);
  return [
    { root: { dir: join(home, '.keel', 'commands'), linkFreeFrom: null }, scope: 'user' },
    { root: { dir: join(home, '.claude', 'commands'), linkFreeFrom: null }, scope: 'user' },
    { root: { dir: join(ws, '.keel', 'commands'), linkFreeFrom: ws }, scope: 'project' },
    { root: { dir: join(ws, '.claude', 'commands'), linkFreeFrom: ws }, scope: 'project' },
  ];
}

export function loadCommands(opts: CatalogOptions): CommandCatalog {
  const home = opts.home ?? homedir();
  const workspace = resolve(opts.workspace);
  const problems: string[] = [];
  const commands: CustomCommand[] = [];
  const held: CustomCommand[] = [];
  const taken = new Set<string>();
  for (const { root, scope } of commandRoots(workspace, home)) {
    for (const f of markdownFiles(root, problems)) {
      if (commands.length + held.length >= MAX_COMMANDS) break;
      const parts = f.rel.replace(/\.md$/i, '').split('/');
      const name = parts.pop()!;
      if (!NAME.test(name) || !parts.every((p) => NAME.test(p))) {
        problems.push(`${shown(f.path, workspace, home)}: not a command name (letters, digits, ".", "_" and "-"); skipped`);
        continue;
      }
      const namespace = parts.join(':');
      const qualified = namespace ? `${namespace}:${name}` : name;
      if (taken.has(qualified)) continue;
      const read = readContentFile(root, f.path);
      if (!read.ok) {
        problems.push(read.problem);
        continue;
      }
      const display = shown(f.path, workspace, home);
      const cmd = commandOf(read.text, { name, namespace, qualified, scope, path: f.path, display });
      taken.add(qualified);
      if (scope === 'project') {
        cmd.item = commandItem(display, read.text, qualified);
        if (!opts.gate.approves(cmd.item)) {
          held.push(cmd);
          continue;
        }
      }
      commands.push(cmd);
    }
  }
  return { commands, held, problems };
}

function commandOf(text: string, at: Pick<CustomCommand, 'name' | 'namespace' | 'qualified' | 'scope' | 'path' | 'display'>): CustomCommand {
  const fm = parseFrontmatter(text);
  const body = fm.body.replace(/^\s*\n/, '');
  const firstLine = body.split('\n').find((l) => l.trim())?.trim().replace(/^#+\s*/, '') ?? '';
  return {
    ...at,
    description: cut(textField(fm.fields, 'description') ?? firstLine, 300),
    argumentHint: cut(textField(fm.fields, 'argument-hint') ?? '', 200),
    allowedTools: toolListField(fm.fields, 'allowed-tools'),
    model: textField(fm.fields, 'model'),
    body,
    problems: fm.problems.map((p) => `${at.display}: ${p}`),
  };
}

function shown(path: string, workspace: string, home: string): string {
  if (path.startsWith(`${workspace}/`)) return path.slice(workspace.length + 1);
  if (path.startsWith(`${home}/`)) return `~/${path.slice(home.length + 1)}`;
  return path;
}

function cut(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** How a command's origin reads in a list: "user", "project", "project:frontend". */
export function commandLabel(c: Pick<CustomCommand, 'scope' | 'namespace'>): string {
  return c.namespace ? `${c.scope}:${c.namespace}` : c.scope;
}
