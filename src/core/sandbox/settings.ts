import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseRule } from '../permissions/rules';
import { checkDomainPattern } from './domains';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The Bash sandbox's settings, in Claude Code's names where it has them (`sandbox.enabled`,
 * `sandbox.excludedCommands`, `sandbox.network.allowedDomains`, `sandbox.network.deniedDomains`).
 */
export interface SandboxSettings {
  enabled: boolean;
  /** Command prefixes that run outside the sandbox (`docker`, `npm publish`). */
  excludedCommands?: string[];
  network?: {
    /** Hosts a sandboxed command may reach through Keel's proxy (domains.ts). Empty: no network. */
    allowedDomains?: string[];
    /** Hosts refused even when allowed. */
    deniedDomains?: string[];
  };
  /** Extra writable folders. */
  writablePaths?: string[];
  /** Default /usr/bin/bwrap, else bwrap on PATH. */
  bwrapPath?: string;
}

/**
 * What one source says about the sandbox. `trusted` sources are the person's own (the user file
 * `~/.keel/settings.json`, VS Code user settings); the others are the workspace's files, which a
 * cloned repository can bring, so they may only make the sandbox stricter.
 */
export interface SandboxLayer {
  source: string;
  trusted: boolean;
  enabled?: boolean;
  excludedCommands?: string[];
  allowedDomains?: string[];
  deniedDomains?: string[];
}

export interface LoadedSandboxSettings {
  settings: SandboxSettings;
  /** For people: what was wrong or ignored, and why. */
  problems: string[];
}

/**
 * Merges the layers. A project may turn the sandbox on and deny domains; it may not turn the
 * sandbox off, exclude commands from it or allow domains (each is reported and ignored): only
 * the person's own settings widen what a sandboxed command can do.
 * - `enabled`: on when any layer turns it on;
 * - `excludedCommands`, `allowedDomains`: the union of the trusted layers;
 * - `deniedDomains`: the union of every layer (WebFetch domain deny rules included by the reader).
 */
export function mergeSandboxLayers(layers: readonly SandboxLayer[], problems: string[] = []): LoadedSandboxSettings {
  const out = { enabled: false, excludedCommands: new Set<string>(), allowed: new Set<string>(), denied: new Set<string>() };
  const trustedOn = layers.some((l) => l.trusted && l.enabled === true);
  for (const l of layers) {
    if (l.enabled === true) out.enabled = true;
    for (const d of l.deniedDomains ?? []) out.denied.add(d);
    if (l.trusted) {
      for (const c of l.excludedCommands ?? []) out.excludedCommands.add(c);
      for (const d of l.allowedDomains ?? []) out.allowed.add(d);
      continue;
    }
    if (l.enabled === false && trustedOn) problems.push(`${l.source}: sandbox.enabled: false is ignored; a project can turn the sandbox on, not off`);
    if (l.excludedCommands?.length) problems.push(`${l.source}: sandbox.excludedCommands is ignored; a project cannot take commands out of the sandbox (put them in ~/.keel/settings.json)`);
    if (l.allowedDomains?.length) {
      problems.push(
        `${l.source}: sandbox.network.allowedDomains is ignored; a project can narrow the network, not widen it ` +
          `(allow ${l.allowedDomains.join(', ')} in ~/.keel/settings.json or keel.sandbox.network.allowedDomains)`,
      );
    }
  }
  const settings: SandboxSettings = { enabled: out.enabled };
  if (out.excludedCommands.size > 0) settings.excludedCommands = [...out.excludedCommands];
  if (out.allowed.size > 0 || out.denied.size > 0) {
    settings.network = {};
    if (out.allowed.size > 0) settings.network.allowedDomains = [...out.allowed];
    if (out.denied.size > 0) settings.network.deniedDomains = [...out.denied];
  }
  return { settings, problems };
}

/** The settings files read for the sandbox: the user's (trusted), then the workspace's four. */
export function sandboxSettingsFiles(workspace: string, home: string = homedir()): { path: string; trusted: boolean }[] {
  const files = [{ path: join(home, '.keel', 'settings.json'), trusted: true }];
  for (const dir of ['.claude', '.keel']) for (const name of ['settings.json', 'settings.local.json']) files.push({ path: join(workspace, dir, name), trusted: false });
  return files;
}

/**
 * The `sandbox` section of one settings file as a layer (and `WebFetch(domain:…)` deny rules as
 * denied domains). A missing file is no layer; a file that is not JSON, or a value of the wrong
 * shape, is reported and that value left out. Never throws.
 */
export function readSandboxLayer(path: string, trusted: boolean, problems: string[]): SandboxLayer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push(`${path}: cannot be read (${errorMessage(err)}); its sandbox settings are not applied`);
    return undefined;
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    problems.push(`${path}: not valid JSON (${errorMessage(err)}); its sandbox settings are not applied`);
    return undefined;
  }
  const root = isObject(json) ? json : {};
  const layer: SandboxLayer = { source: path, trusted };
  const denied = webFetchDenials(root);
  const sandbox = root.sandbox;
  if (sandbox !== undefined && !isObject(sandbox)) problems.push(`${path}: sandbox must be an object; it is ignored`);
  if (isObject(sandbox)) {
    if (typeof sandbox.enabled === 'boolean') layer.enabled = sandbox.enabled;
    else if (sandbox.enabled !== undefined) problems.push(`${path}: sandbox.enabled must be true or false; it is ignored`);
    const excluded = stringList(sandbox.excludedCommands, `${path}: sandbox.excludedCommands`, problems);
    if (excluded) layer.excludedCommands = excluded.filter((c) => c.trim() !== '');
    const network = sandbox.network;
    if (network !== undefined && !isObject(network)) problems.push(`${path}: sandbox.network must be an object; it is ignored`);
    if (isObject(network)) {
      const allowed = domainList(network.allowedDomains, `${path}: sandbox.network.allowedDomains`, problems);
      if (allowed) layer.allowedDomains = allowed;
      denied.push(...(domainList(network.deniedDomains, `${path}: sandbox.network.deniedDomains`, problems) ?? []));
    }
  }
  if (denied.length > 0) layer.deniedDomains = denied;
  return layer;
}

/**
 * The sandbox settings of a workspace from its settings files (see `mergeSandboxLayers`), plus
 * any `extra` layers (a host's own settings, e.g. VS Code's). Never throws.
 */
export function loadSandboxSettings(opts: { workspace: string; home?: string; extra?: readonly SandboxLayer[]; problems?: string[] }): LoadedSandboxSettings {
  const problems = opts.problems ?? [];
  const layers: SandboxLayer[] = [...(opts.extra ?? [])];
  for (const f of sandboxSettingsFiles(opts.workspace, opts.home)) {
    const layer = readSandboxLayer(f.path, f.trusted, problems);
    if (layer) layers.push(layer);
  }
  return mergeSandboxLayers(layers, problems);
}

/** Checks a list of domain patterns, keeping the valid ones (normalised) and reporting the rest. */
export function domainList(value: unknown, where: string, problems: string[]): string[] | undefined {
  const list = stringList(value, where, problems);
  if (!list) return undefined;
  const out: string[] = [];
  for (const raw of list) {
    const c = checkDomainPattern(raw);
    if (c.ok) out.push(c.pattern);
    else problems.push(`${where}: ${c.problem}; it is ignored`);
  }
  return out;
}

function stringList(value: unknown, where: string, problems: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    problems.push(`${where} must be a list of strings; it is ignored`);
    return undefined;
  }
  return value as string[];
}

/** `WebFetch(domain:x)` deny rules: a host denied to WebFetch is denied to sandboxed commands too. */
function webFetchDenials(root: Record<string, unknown>): string[] {
  const permissions = root.permissions;
  if (!isObject(permissions) || !Array.isArray(permissions.deny)) return [];
  const out: string[] = [];
  for (const raw of permissions.deny) {
    if (typeof raw !== 'string') continue;
    const r = parseRule(raw);
    if (!r.ok || r.tool !== 'WebFetch' || !r.specifier?.startsWith('domain:')) continue;
    const c = checkDomainPattern(r.specifier.slice('domain:'.length));
    if (c.ok) out.push(c.pattern);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
