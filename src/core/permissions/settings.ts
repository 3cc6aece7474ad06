import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { isPermissionMode, PERMISSION_MODES } from '../../shared/domain/permissionModes';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { allowRuleItem, directoryItem, envItem, isApproved, modeItem, type TrustItem, type TrustView } from '../trust/items';
import { splitProjectEnv } from '../trust/projectEnv';
import { looserRequests, settleDefaultMode, type ModeRequest } from './defaultMode';
import { operatorParts } from './pipelineRules';
import { parseRule, ruleNeverMatches, type PermissionRule, type RuleBehavior } from './rules';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Reads permission settings: `{"permissions":{"allow":[],"ask":[],"deny":[],"defaultMode":…,
 * "additionalDirectories":[]}, "env":{}}`. A missing file is fine; a malformed one becomes a
 * problem and marks the settings `degraded` (the engine then never allows without asking),
 * because its deny rules are unknown. Never throws.
 *
 * The trust model (docs/permissions.md, "Trust"): what a workspace file says that only tightens
 * (deny and ask rules, a stricter `defaultMode`) applies at once; what loosens — allow rules,
 * `additionalDirectories`, a looser `defaultMode`, `env` — applies only once the person approved
 * that exact item (`trust`), and is otherwise listed in `held`. The person's own file and files
 * they name (`--settings`) are trusted. `env` variables a workspace may never set are dropped
 * with a problem, approved or not (trust/projectEnv.ts).
 */
export interface SettingsSource {
  path: string;
  scope: 'project' | 'local' | 'user';
  /** Folder that `/path` patterns in this file are relative to. */
  projectRoot: string;
  /** Named by the person (`--settings FILE`): its allow rules, directories and env need no approval. */
  trusted?: boolean;
}

export interface LoadedSettings {
  rules: PermissionRule[];
  additionalDirectories: string[];
  /**
   * The mode the files settle on (defaultMode.ts: a workspace file may only make it stricter);
   * what was ignored is in `problems`.
   */
  defaultMode?: PermissionMode;
  /** Every valid `defaultMode` the files ask for, in reading order. */
  modeRequests: ModeRequest[];
  problems: string[];
  /** Tools whose rules could not be read (a malformed deny/ask rule): every call of them asks. `*`: all tools. */
  unreadableTools: Set<string>;
  /** Identity of the files read (path, mtime, size), to notice changes. */
  stamp: string;
  /** Variables the files set for tool processes: the person's, and the workspace's once approved. */
  env: Record<string, string>;
  /** What the workspace's files would loosen, approved or not (the approval lists these). */
  loosening: TrustItem[];
  /** The part of `loosening` not approved: held back, not applied. */
  held: TrustItem[];
}

const fileSchema = z.looseObject({
  permissions: z
    .looseObject({
      allow: z.array(z.string()).optional(),
      ask: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
      defaultMode: z.string().optional(),
      additionalDirectories: z.array(z.string()).optional(),
    })
    .optional(),
  env: z.record(z.string(), z.string()).optional(),
});

/** The settings files of a workspace, lowest to highest scope. */
export function defaultSources(workspace: string, userSettingsPath: string | undefined): SettingsSource[] {
  const out: SettingsSource[] = [];
  if (userSettingsPath) out.push({ path: userSettingsPath, scope: 'user', projectRoot: workspace });
  for (const dir of ['.claude', '.keel']) {
    out.push({ path: join(workspace, dir, 'settings.json'), scope: 'project', projectRoot: workspace });
    out.push({ path: join(workspace, dir, 'settings.local.json'), scope: 'local', projectRoot: workspace });
  }
  return out;
}

/** An explicit `--settings FILE`: its project is the folder holding its `.keel`/`.claude` folder. */
export function explicitSource(path: string, workspace: string): SettingsSource {
  const abs = resolve(workspace, path);
  const parent = dirname(abs);
  const projectRoot = /[/\\]\.(keel|claude)$/.test(parent) ? dirname(parent) : parent;
  return { path: abs, scope: /\.local\.json$/.test(abs) ? 'local' : 'project', projectRoot, trusted: true };
}

/** How a settings file is named in approvals and notices: relative to its project. */
export function sourceDisplay(src: SettingsSource): string {
  const rel = relative(src.projectRoot, src.path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : src.path;
}

/**
 * Identity of the settings files as they are now: path, inode, size, mtime and ctime of each (a
 * missing file is `-`). Decisions no longer take it every time: the files are watched
 * (settingsWatch.ts), and this is what the watch falls back to where watching is not possible. It
 * must still be cheap: a missing file is reported by `statSync` without an exception, and when a
 * folder holds several of the files (`.claude/`, `.keel/`) and does not exist, its files are not
 * stat'ed one by one. The inode and ctime catch a file replaced by a rename, or rewritten to the
 * same size within the same millisecond, which mtime and size alone would miss.
 */
export function stampOf(sources: SettingsSource[]): string {
  let stamp = '';
  let absentDir: string | null = null;
  for (let i = 0; i < sources.length; i++) {
    const path = sources[i]!.path;
    const dir = dirname(path);
    if (dir !== absentDir) {
      absentDir = null;
      // Two or more files in one folder: a missing folder answers for all of them.
      if (sources[i + 1] && dirname(sources[i + 1]!.path) === dir && !isDirectory(dir)) absentDir = dir;
    }
    const st = absentDir === dir ? undefined : statQuietly(path);
    stamp += st ? `${path}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}|` : `${path}:-|`;
  }
  return stamp;
}

function statQuietly(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR, EACCES…: no file Keel can read; loadSettings reports what is wrong with it.
    return undefined;
  }
}

/** False for a missing folder, or a path that is not one (its files cannot exist either). */
function isDirectory(path: string): boolean {
  return statQuietly(path)?.isDirectory() ?? false;
}

export function loadSettings(sources: SettingsSource[], home: string, trust: TrustView): LoadedSettings {
  const out: LoadedSettings = {
    rules: [],
    additionalDirectories: [],
    modeRequests: [],
    problems: [],
    unreadableTools: new Set(),
    stamp: stampOf(sources),
    env: {},
    loosening: [],
    held: [],
  };
  /** A loosening item: applied (true) when the file is trusted or the person approved it. */
  const gate = (src: SettingsSource, item: TrustItem): boolean => {
    if (src.scope === 'user' || src.trusted) return true;
    out.loosening.push(item);
    if (isApproved(trust, item)) return true;
    out.held.push(item);
    return false;
  };
  const modeSources = new Map<string, SettingsSource>();
  for (const src of sources) {
    const parsed = readSettingsFile(src, out);
    if (!parsed) continue;
    const shown = sourceDisplay(src);
    const p = parsed.permissions;
    for (const behavior of ['deny', 'ask', 'allow'] as RuleBehavior[]) {
      for (const raw of p?.[behavior] ?? []) {
        const r = parseRule(raw);
        if (r.ok) {
          if (behavior === 'allow' && !gate(src, allowRuleItem(shown, raw.trim()))) continue;
          out.rules.push({ behavior, tool: r.tool, ...(r.specifier !== undefined ? { specifier: r.specifier } : {}), raw: raw.trim(), source: src.path, projectRoot: src.projectRoot });
          const never = ruleNeverMatches(behavior, r.tool, r.specifier, operatorParts);
          if (never) out.problems.push(`${src.path}: ${behavior} rule ${never}`);
          continue;
        }
        if (behavior === 'allow') out.problems.push(`${src.path}: allow rule ignored: ${r.error}`);
        else {
          out.unreadableTools.add(r.tool ?? '*');
          out.problems.push(`${src.path}: ${behavior} rule not understood: ${r.error}; every ${r.tool ?? ''} call will ask until it is fixed`.replace('every  call', 'every call'));
        }
      }
    }
    if (p?.defaultMode !== undefined) {
      if (!isPermissionMode(p.defaultMode)) out.problems.push(`${src.path}: defaultMode "${p.defaultMode}" ignored (one of ${PERMISSION_MODES.join(', ')})`);
      else {
        out.modeRequests.push({ mode: p.defaultMode, scope: src.scope, path: src.path });
        modeSources.set(src.path, src);
      }
    }
    for (const d of p?.additionalDirectories ?? []) {
      const expanded = d === '~' || d.startsWith('~/') ? home + d.slice(1) : d;
      const abs = isAbsolute(expanded) ? expanded : resolve(src.projectRoot, expanded);
      if (gate(src, directoryItem(shown, d, abs))) out.additionalDirectories.push(abs);
    }
    const env = parsed.env ?? {};
    const { kept, dropped } = src.scope === 'user' || src.trusted ? { kept: env, dropped: [] } : splitProjectEnv(env);
    for (const d of dropped) out.problems.push(`${src.path}: env ${d.name} ignored: a workspace settings file may not set it (${d.why})`);
    for (const [name, value] of Object.entries(kept)) if (gate(src, envItem(shown, name, value))) out.env[name] = value;
  }
  // A workspace's looser mode is an item of its own: approved, it applies as the person's would.
  for (const { request, base } of looserRequests(out.modeRequests)) {
    const src = modeSources.get(request.path);
    if (src && !src.trusted && gate(src, modeItem(sourceDisplay(src), request.mode, base))) request.approved = true;
  }
  const settled = settleDefaultMode(out.modeRequests);
  if (settled.mode) out.defaultMode = settled.mode;
  out.problems.push(...settled.notices);
  return out;
}

/** One file's parsed content, or null (missing, or a problem recorded in `out`). */
function readSettingsFile(src: SettingsSource, out: LoadedSettings): z.infer<typeof fileSchema> | null {
  let text: string;
  try {
    text = readFileSync(src.path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    out.problems.push(`${src.path}: cannot be read (${errorMessage(err)}); every call will ask until it is fixed`);
    out.unreadableTools.add('*');
    return null;
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    out.problems.push(`${src.path}: not valid JSON (${errorMessage(err)}); every call will ask until it is fixed`);
    out.unreadableTools.add('*');
    return null;
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    out.problems.push(`${src.path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}; every call will ask until it is fixed`);
    out.unreadableTools.add('*');
    return null;
  }
  return parsed.data;
}

/**
 * The starting mode the settings files of `workspace` settle on (defaultMode.ts), with what the
 * person should see: what was ignored (a looser workspace mode, an invalid value) and rules that
 * can never match (with the form that would). Never throws.
 */
export function settingsDefaultMode(workspace: string, trust: TrustView, opts: { home?: string; settingsFiles?: string[] } = {}): { mode: PermissionMode | undefined; notices: string[] } {
  const home = opts.home ?? homedir();
  const sources = [...defaultSources(workspace, join(home, '.keel', 'settings.json')), ...(opts.settingsFiles ?? []).map((f) => explicitSource(f, workspace))];
  const loaded = loadSettings(sources, home, trust);
  // Ignored modes, and rules that can never match (the person means something by them).
  return { mode: loaded.defaultMode, notices: loaded.problems.filter((p) => p.includes('defaultMode') || p.includes('never matches')) };
}
