import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadInstructions } from '../context/instructions';
import { hookSources, loadHooksConfig } from '../hooks/config';
import { loadMcpConfig } from '../mcp/config';
import { defaultSources, loadSettings } from '../permissions/settings';
import { digestOf, fileDigest } from './digest';
import { contentItem, hookItem, instructionsItem, loopItem, loopPromptFiles, mcpItem, memoryItem, NOTHING_APPROVED, type TrustItem } from './items';
import { loadCommands } from '../commands/catalog';
import { loadSkills } from '../commands/skills';

/**
 * Everything a workspace provides that loosens permissions or runs code, as items the person
 * approves at once (docs/permissions.md, "Trust"): the settings files' allow rules, additional
 * directories, looser `defaultMode` and `env`; their hooks (with the files they run); the project
 * `.mcp.json` servers (with their env and the files they run); the instructions files KEEL.md,
 * AGENTS.md, CLAUDE.md, .claude/CLAUDE.md and what they import; the memories in `.keel/memory/`;
 * the loop folders in `.keel/loop/`. Read fresh on every call. Never throws: what cannot be read
 * is in `problems`.
 */
export interface Manifest {
  workspace: string;
  items: TrustItem[];
  problems: string[];
  /** Digest of every item's id and fingerprint: what `keel trust approve --fingerprint` checks. */
  fingerprint: string;
}

export interface ManifestOptions {
  workspace: string;
  keelHome: string;
  /** The person's home (`~/.keel/settings.json`, `~` in rules). Default: the OS home. */
  home?: string;
  /** Keel's environment (`${VAR}` in `.mcp.json`, PATH for the programs hooks run). */
  env?: Readonly<Record<string, string | undefined>>;
}

export function collectManifest(opts: ManifestOptions): Manifest {
  const workspace = resolve(opts.workspace);
  const home = opts.home ?? homedir();
  const items: TrustItem[] = [];
  const problems: string[] = [];

  const settings = loadSettings(defaultSources(workspace, join(home, '.keel', 'settings.json')), home, NOTHING_APPROVED);
  items.push(...settings.loosening);
  problems.push(...settings.problems);
  items.push(...runningItems(opts, problems));

  const instructions = loadInstructions({ workspace, home, trust: null });
  for (const f of instructions.files) if (f.scope === 'workspace') items.push(instructionsItem(f.display, f.digest, f.importedBy));

  items.push(...memoryItems(workspace), ...loopItems(workspace), ...contentItems(workspace, home));
  return { workspace, items, problems: [...new Set(problems)], fingerprint: manifestFingerprint(items) };
}

/**
 * The workspace's hooks and project MCP servers as items (with the files they run). `problems`
 * collects what could not be read.
 */
export function runningItems(opts: ManifestOptions, problems: string[] = []): TrustItem[] {
  const workspace = resolve(opts.workspace);
  const home = opts.home ?? homedir();
  const env = opts.env ?? process.env;
  const ctx = { workspace, home, ...(env.PATH !== undefined ? { pathEnv: env.PATH } : {}) };
  const items: TrustItem[] = [];
  const hooks = loadHooksConfig(hookSources(workspace, home));
  problems.push(...hooks.problems);
  for (const h of hooks.hooks) if (h.scope !== 'user') items.push(hookItem(h, displayOf(workspace, h.source), ctx));
  const mcp = loadMcpConfig({ workspace, keelHome: opts.keelHome, env });
  for (const p of mcp.problems) if (p.source.startsWith(workspace)) problems.push(`${p.source}: ${p.message}`);
  for (const s of mcp.servers) if (s.scope === 'project') items.push(mcpItem(s, '.mcp.json', ctx));
  return items;
}

/** The files that configure hooks and MCP servers (watched to know when `runningItems` changes). */
export function configFiles(workspace: string, home: string): string[] {
  return [...hookSources(workspace, home).map((s) => s.path), join(workspace, '.mcp.json')];
}

/** The workspace's own slash commands and skills (`.claude/`, `.keel/`), each for its exact text. */
export function contentItems(workspace: string, home: string): TrustItem[] {
  const out: TrustItem[] = [];
  const none = { approves: () => false };
  for (const c of loadCommands({ workspace, home, gate: none }).held) if (c.item) out.push(contentItem(c.item));
  for (const s of loadSkills({ workspace, home, gate: none }).held) if (s.item) out.push(contentItem(s.item));
  return out;
}

/** The digest of a set of items (ids and fingerprints, in order). */
export function manifestFingerprint(items: readonly TrustItem[]): string {
  return digestOf(items.map((i) => [i.id, i.fingerprint]));
}

/** The memory files committed to `.keel/memory/` (plain `.md` files; links are not memories). */
export function memoryItems(workspace: string): TrustItem[] {
  const dir = join(workspace, '.keel', 'memory');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.md') && !n.startsWith('.')).sort();
  } catch {
    return [];
  }
  const out: TrustItem[] = [];
  for (const name of names) {
    const p = join(dir, name);
    try {
      if (!lstatSync(p).isFile()) continue;
    } catch {
      continue;
    }
    out.push(memoryItem(name, fileDigest(p)));
  }
  return out;
}

/** The loop folders in `.keel/loop/` (those with a state file: a loop Keel could continue). */
export function loopItems(workspace: string): TrustItem[] {
  const dir = join(workspace, '.keel', 'loop');
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.filter((n) => !n.startsWith('.') && existsSync(join(dir, n, 'state.json'))).map((n) => loopItem(n, loopPromptFiles(workspace, n)));
}

function displayOf(workspace: string, path: string): string {
  return path.startsWith(`${workspace}/`) ? path.slice(workspace.length + 1) : path;
}
