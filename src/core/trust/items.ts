import { join } from 'node:path';
import { commandRuns, type CommandContext, type RunFile } from './commandFiles';
import { digestOf, fileDigest } from './digest';
import type { McpServerSpec } from '../mcp/types';

/**
 * What a workspace provides that loosens permissions or runs code, one item each
 * (docs/permissions.md, "Trust"). An item's `id` names it within its workspace (the rule, the
 * hook's definition, the server's name, the file); its `fingerprint` is a digest of everything
 * that decides what it does — for hooks and servers also of every file they run. An approval is
 * for one id *and* fingerprint: a changed item is a new question. Pure except for reading the
 * files it digests; never throws.
 */
export type TrustKind = 'allow' | 'directory' | 'mode' | 'env' | 'hook' | 'mcp' | 'instructions' | 'memory' | 'loop' | 'command' | 'skill';

export interface TrustItem {
  id: string;
  kind: TrustKind;
  fingerprint: string;
  /** One line, as a list shows it. */
  summary: string;
  /** Exactly what would be used or run, line by line (command, env, files and their digests). */
  details: string[];
  /** The file it comes from, as the person sees it (relative to the workspace). */
  source: string;
  /** Files it runs: checked again right before each run, and protected from the model's writes. */
  runs?: RunFile[];
  /** Why it can never be approved (Keel cannot tell what it would run). */
  blocked?: string[];
}

/** What consumers need of the approvals. */
export interface TrustView {
  /** True when the person approved `item` in exactly this form (never in Restricted Mode). */
  approves(item: Pick<TrustItem, 'id' | 'fingerprint'>): boolean;
  /** Changes whenever an approval changes (a consumer re-reads what it gated). */
  version(): number;
}

/** A view that approves nothing: Restricted Mode, or a host without an approval store. */
export const NOTHING_APPROVED: TrustView = { approves: () => false, version: () => 0 };

/** A view of a fixed set of approvals (id → fingerprint), e.g. what a host sent a worker. */
export function approvalsView(approved: Readonly<Record<string, string>>, version = 0): TrustView {
  return { approves: (item) => approved[item.id] === item.fingerprint, version: () => version };
}

/** True when `item` may be used: approved in exactly this form, and approvable at all. */
export function isApproved(view: TrustView, item: Pick<TrustItem, 'id' | 'fingerprint' | 'blocked'>): boolean {
  return !item.blocked?.length && view.approves(item);
}

const short = (digest: string) => (/^[0-9a-f]{64}$/.test(digest) ? `sha256 ${digest.slice(0, 12)}` : digest);

/** The lines naming each file a command runs, with its digest. */
export function runLines(runs: readonly RunFile[]): string[] {
  return runs.map((f) => `runs ${f.display} (${f.digest === 'absent' ? 'does not exist yet' : short(f.digest)})`);
}

/** One allow rule of a workspace settings file. */
export function allowRuleItem(source: string, rule: string): TrustItem {
  const id = `allow:${source}:${rule}`;
  return { id, kind: 'allow', fingerprint: digestOf([id]), summary: `allow rule ${rule}`, details: [`adds the allow rule ${rule}`], source };
}

/** One `additionalDirectories` entry (`resolved`: where it leads). */
export function directoryItem(source: string, raw: string, resolved: string): TrustItem {
  const id = `directory:${source}:${raw}`;
  const details = [`lets tools read and edit in ${resolved} as in the workspace`];
  return { id, kind: 'directory', fingerprint: digestOf([raw, resolved]), summary: `additional directory ${resolved}`, details, source };
}

/** A `defaultMode` looser than the person's own settings give. */
export function modeItem(source: string, mode: string, than: string): TrustItem {
  const id = `mode:${source}`;
  return { id, kind: 'mode', fingerprint: digestOf([mode]), summary: `starting mode ${mode}`, details: [`starts tasks in ${mode} instead of ${than}`], source };
}

/** One variable of a workspace settings file's `env`. */
export function envItem(source: string, name: string, value: string): TrustItem {
  const id = `env:${source}:${name}`;
  const details = [`sets ${name}=${value} for every command, hook and MCP server Keel runs`];
  return { id, kind: 'env', fingerprint: digestOf([name, value]), summary: `environment ${name}=${value}`, details, source };
}

/** A workspace hook: its definition and the files its command runs. */
export function hookItem(
  hook: {
    event: string;
    matcher?: string | undefined;
    if?: string | undefined;
    command: string;
    args?: string[] | undefined;
    type?: 'prompt' | undefined;
    model?: string | undefined;
    fingerprint: string;
    source: string;
  },
  source: string,
  ctx: CommandContext,
): TrustItem {
  // A prompt hook runs no file: what is approved is its prompt (and model), shown in full.
  const runs = hook.type === 'prompt' ? { files: [], notes: [], unresolved: [] } : commandRuns(hook.args ? { words: [hook.command, ...hook.args] } : { shell: hook.command }, ctx);
  const line =
    hook.type === 'prompt'
      ? `asks ${hook.model ? `the model ${hook.model}` : 'a model'} (a priced request of the task): ${hook.command}`
      : hook.args
        ? [hook.command, ...hook.args].join(' ')
        : hook.command;
  // Its `if` is part of what it is: the person approves it with the calls it fires on.
  const when = `${hook.event}${hook.matcher ? ` [${hook.matcher}]` : ''}${hook.if ? ` if ${hook.if}` : ''}`;
  const details = [`on ${when} runs: ${line}`, ...runLines(runs.files), ...runs.notes];
  return {
    id: `hook:${hook.fingerprint}`,
    kind: 'hook',
    fingerprint: digestOf([hook.fingerprint, runs.files.map((f) => [f.path, f.part ?? '', f.digest])]),
    summary: `hook ${when}: ${line}`,
    details,
    source,
    runs: runs.files,
    ...(runs.unresolved.length ? { blocked: runs.unresolved.map((u) => `Keel cannot tell what this hook runs: ${u}`) } : {}),
  };
}

/**
 * A project MCP server: its command or URL, its environment, and the files it runs. `resolved`
 * is the definition after `${VAR}` expansion with the forbidden variables dropped (what would
 * start); null when it cannot start. Values are shown as written (an expanded one may be a token).
 */
export function mcpItem(s: { name: string; template: McpServerSpec; resolved: McpServerSpec | null; problems: readonly string[] }, source: string, ctx: CommandContext): TrustItem {
  const spec = s.resolved ?? s.template;
  const words = spec.transport === 'stdio' ? [spec.command, ...spec.args] : [spec.url];
  const runs = spec.transport === 'stdio' ? commandRuns({ words }, ctx) : { files: [], notes: [], unresolved: [] };
  const line = words.join(' ');
  const written = s.template.transport === 'stdio' ? s.template.env : s.template.headers;
  const kept = spec.transport === 'stdio' ? Object.keys(spec.env) : [];
  const details = [
    spec.transport === 'stdio' ? `starts: ${line}` : `connects to ${line} (${spec.transport})`,
    ...kept.map((k) => `with ${k}=${written[k] ?? ''}`),
    ...(spec.transport !== 'stdio' && Object.keys(spec.headers).length ? [`sends the headers ${Object.keys(spec.headers).join(', ')}`] : []),
    ...s.problems,
    ...runLines(runs.files),
    ...runs.notes,
  ];
  return {
    id: `mcp:${s.name}`,
    kind: 'mcp',
    fingerprint: digestOf([s.template, s.resolved, runs.files.map((f) => [f.path, f.part ?? '', f.digest])]),
    summary: `MCP server ${s.name}: ${line}`,
    details,
    source,
    runs: runs.files,
    ...(runs.unresolved.length ? { blocked: runs.unresolved.map((u) => `Keel cannot tell what this server runs: ${u}`) } : {}),
  };
}

/** An instructions file of the workspace (or one it imports), by its content. */
export function instructionsItem(display: string, digest: string, importedBy?: string): TrustItem {
  return {
    id: `instructions:${display}`,
    kind: 'instructions',
    fingerprint: digest,
    summary: `instructions ${display}${importedBy ? ` (imported by ${importedBy})` : ''}`,
    details: [`goes into the model's system prompt for every task (${short(digest)})`],
    source: display,
  };
}

/** A memory file committed to `.keel/memory/`. */
export function memoryItem(file: string, digest: string, title?: string): TrustItem {
  return {
    id: `memory:${file}`,
    kind: 'memory',
    fingerprint: digest,
    summary: `memory ${file}${title ? ` ("${title}")` : ''}`,
    details: [`may be added to the model's system prompt when relevant (${short(digest)})`],
    source: `.keel/memory/${file}`,
  };
}

/** The files of a loop folder that go into its iterations' prompts. */
export function loopItem(name: string, files: Record<string, string>): TrustItem {
  return {
    id: `loop:${name}`,
    kind: 'loop',
    fingerprint: loopFingerprint(files),
    summary: `loop folder .keel/loop/${name}`,
    details: [`its goal and guardrails (and its progress file) go into the prompt of each iteration when the loop is continued`],
    source: `.keel/loop/${name}`,
  };
}

/**
 * The files of one loop whose content an approval covers: the goal (`anchor.md`) and the
 * guardrails, which Keel writes and every iteration's prompt reads. `progress.md` (the agent's
 * own working file, written during iterations) and `state.json` (Keel's bookkeeping) are not:
 * docs/permissions.md, "Trust", says what that leaves out.
 */
export function loopPromptFiles(workspace: string, name: string): Record<string, string> {
  const dir = join(workspace, '.keel', 'loop', name);
  return { anchor: join(dir, 'anchor.md'), guardrails: join(dir, 'guardrails.md') };
}

/** The fingerprint of a loop folder's prompt files (name → path). */
export function loopFingerprint(files: Record<string, string>): string {
  return digestOf(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, p]) => [k, fileDigest(p)]));
}

/**
 * True when each file still has the content it had when `runs` was taken (right before a hook
 * or a server runs). Returns the first changed file's display name, or null when none changed.
 */
export function changedRunFile(runs: readonly RunFile[] | undefined): string | null {
  for (const f of runs ?? []) {
    const now = f.part ? null : fileDigest(f.path);
    if (now !== null && now !== f.digest) return f.display;
  }
  return null;
}

/**
 * A workspace's slash command or skill (docs/commands.md): repository content the model reads as
 * instructions, approved for its exact text (`contentDigest`), like an instructions file.
 */
export function contentItem(item: { id: string; kind: 'command' | 'skill'; fingerprint: string; summary: string; source: string }): TrustItem {
  const what = item.kind === 'command' ? 'offers the slash command, whose text becomes a prompt when you run it' : 'lists the skill for the model, which may load its text and files';
  return { id: item.id, kind: item.kind, fingerprint: item.fingerprint, summary: item.summary, details: [`${what}: ${item.source}`], source: item.source };
}
