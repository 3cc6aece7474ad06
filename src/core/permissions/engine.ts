import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import type { PermissionMode } from '../runtime/types';
import type { PermissionSubject } from '../tools/types';
import { checkBash } from './bashCheck';
import { emptyFindings, groupRules, type Findings, type RuleSet } from './findings';
import { compilePathPattern, isInside, protectedReason, realLocation, type PathBases } from './paths';
import { domainMatches, mcpRuleMatches, realHost, type PermissionRule } from './rules';
import { defaultSources, explicitSource, loadSettings, stampOf, type LoadedSettings, type SettingsSource } from './settings';
import { loadBashParser } from './shell/parser';

/** One decision with its explanation. `risky`: the editor should show a modal, not only a card. */
export type EngineDecision = { decision: 'allow' | 'ask' | 'deny'; reason: string; rule?: string; source?: string; risky?: boolean };

export interface PermissionCall {
  tool: string;
  input: unknown;
  subject: PermissionSubject;
  readOnly: boolean;
}

export interface PermissionEngine {
  /** Never throws; a malformed settings file is reported in `problems` and never widens permissions. */
  decide(call: PermissionCall, mode: PermissionMode): Promise<EngineDecision>;
  /** Problems found in the settings files, for people (re-read when the files change). */
  problems(): string[];
  /** The `defaultMode` the settings ask for, if any (bypassPermissions only from local or user files). */
  defaultMode(): PermissionMode | undefined;
}

export interface EngineOptions {
  workspace: string;
  /** Extra settings files (`--settings`), read after the workspace's own files. */
  settingsFiles?: string[];
  /** User-level settings. Default: ~/.keel/settings.json under `home`. */
  userSettingsPath?: string;
  additionalDirectories?: string[];
  home?: string;
  /** When the Bash sandbox is on, a call asking to run outside it always asks. */
  sandbox?: { enabled: boolean };
}

/** Builds the engine: loads the shell parser once and reads the settings files. Rejects only if the parser cannot load. */
export async function createPermissionEngine(opts: EngineOptions): Promise<PermissionEngine> {
  const parser = await loadBashParser();
  return new RuleEngine(parser, opts);
}

class RuleEngine implements PermissionEngine {
  private readonly sources: SettingsSource[];
  private readonly home: string;
  private readonly workspaceReal: string;
  private settings!: LoadedSettings;
  private rules!: RuleSet;
  private roots: string[] = [];
  private readonly userSettingsPath: string;

  constructor(
    private readonly parser: Parser,
    private readonly opts: EngineOptions,
  ) {
    this.home = resolve(opts.home ?? homedir());
    const workspace = resolve(opts.workspace);
    this.workspaceReal = realLocation(workspace);
    this.userSettingsPath = opts.userSettingsPath ?? join(this.home, '.keel', 'settings.json');
    this.sources = [...defaultSources(workspace, this.userSettingsPath), ...(opts.settingsFiles ?? []).map((f) => explicitSource(f, workspace))];
    this.reload();
  }

  problems(): string[] {
    this.refresh();
    return [...this.settings.problems];
  }

  defaultMode(): PermissionMode | undefined {
    this.refresh();
    return this.settings.defaultMode;
  }

  async decide(call: PermissionCall, mode: PermissionMode): Promise<EngineDecision> {
    try {
      this.refresh();
      return this.decideNow(call, mode);
    } catch (err) {
      const reason = `the permission check failed (${err instanceof Error ? err.message : String(err)})`;
      return mode === 'dontAsk' ? { decision: 'deny', reason } : { decision: 'ask', reason, risky: true };
    }
  }

  private refresh(): void {
    if (stampOf(this.sources) !== this.settings.stamp) this.reload();
  }

  private reload(): void {
    this.settings = loadSettings(this.sources, this.home);
    this.rules = groupRules(this.settings.rules);
    this.roots = [this.workspaceReal, ...[...(this.opts.additionalDirectories ?? []), ...this.settings.additionalDirectories].map((d) => realLocation(resolve(this.opts.workspace, d)))];
  }

  private decideNow(call: PermissionCall, mode: PermissionMode): EngineDecision {
    const f = emptyFindings();
    const unreadable = this.settings.unreadableTools;
    if (unreadable.has('*') || unreadable.has(call.tool)) f.hardAsk.push(`the permission settings could not be read (${this.settings.problems[0] ?? 'see problems'})`);
    this.toolRules(call, f);
    const s = call.subject;
    switch (s.kind) {
      case 'execute':
        if (this.opts.sandbox?.enabled && isObject(call.input) && call.input.dangerouslyDisableSandbox === true) {
          f.hardAsk.push('the command asks to run outside the sandbox');
          f.risky.push('runs outside the sandbox');
        }
        if (call.tool === 'Bash') checkBash(this.bashContext(), s.command, s.cwd, f);
        break;
      case 'read':
        this.checkReads(call.tool, s.paths, f);
        break;
      case 'write':
        this.checkWrites(call.tool, s.paths, f);
        break;
      case 'network':
        this.checkNetwork(call.tool, s.url, f);
        break;
      case 'mcp':
        f.readOnly = call.readOnly;
        break;
      case 'task':
        f.readOnly = true;
        f.allow ??= { reason: 'a subtask asks for its own permissions', rules: [] };
        break;
    }
    return combine(f, mode, s.kind);
  }

  /** Rules naming the whole tool (`Bash`, `WebFetch`, `mcp__server`), or Edit for every editing tool. */
  private toolRules(call: PermissionCall, f: Findings): void {
    const server = call.subject.kind === 'mcp' ? call.subject.server : undefined;
    for (const r of this.rules.all) {
      if (r.specifier !== undefined) continue;
      const hit = r.tool.startsWith('mcp__') ? mcpRuleMatches(r.tool, call.tool, server) : r.tool === call.tool || (r.tool === 'Edit' && call.subject.kind === 'write');
      if (!hit) continue;
      if (r.behavior === 'deny') f.deny ??= { reason: `denied by ${r.raw}`, rule: r };
      else if (r.behavior === 'ask') f.ask ??= { reason: `${r.raw} asks`, rule: r };
      else if (call.tool !== 'Bash' && call.subject.kind !== 'write' && call.subject.kind !== 'read') f.allow ??= { reason: `allowed by ${r.raw}`, rules: [r] };
    }
  }

  private bases(): PathBases {
    return { workspace: this.workspaceReal, home: this.home };
  }

  private pathRules(kinds: string[], behavior: PermissionRule['behavior']): { rule: PermissionRule; test: (p: string) => boolean }[] {
    return this.rules.all
      .filter((r) => r.behavior === behavior && r.specifier !== undefined && kinds.includes(r.tool))
      .map((rule) => ({ rule, test: compilePathPattern(rule.specifier as string, realLocation(rule.projectRoot), this.bases()) }));
  }

  private insideRoots(real: string): boolean {
    return this.roots.some((r) => isInside(r, real));
  }

  private checkReads(tool: string, paths: string[], f: Findings): void {
    f.readOnly = true;
    const allowRules = this.pathRules(['Read'], 'allow');
    const wholeTool = this.rules.all.find((r) => r.behavior === 'allow' && r.specifier === undefined && r.tool === tool);
    const used: PermissionRule[] = [];
    let allOk = true;
    for (const p of paths) {
      const real = realLocation(p);
      this.readRules(p, real, f);
      // A search root (Glob, Grep) reads what is inside it.
      if (tool !== 'Read') this.readRules(join(p, '_'), join(real, '_'), f);
      const rule = allowRules.find((a) => a.test(real))?.rule ?? wholeTool;
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else if (!this.insideRoots(real)) allOk = false;
    }
    if (allOk) f.allow ??= { reason: used.length ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'reading inside the workspace', rules: used };
  }

  private readRules(lexical: string, real: string, f: Findings): void {
    const hit = (b: PermissionRule['behavior']) => this.pathRules(['Read'], b).find((a) => a.test(real) || a.test(resolve(lexical)))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
  }

  private checkWrites(tool: string, paths: string[], f: Findings): void {
    const kinds = tool === 'Write' ? ['Edit', 'Write'] : ['Edit'];
    const allowRules = this.pathRules(kinds, 'allow');
    const wholeTool = this.rules.all.find((r) => r.behavior === 'allow' && r.specifier === undefined && (r.tool === tool || r.tool === 'Edit'));
    const used: PermissionRule[] = [];
    let allOk = true;
    for (const p of paths) {
      const real = this.writeTarget(p, p, f, kinds);
      const rule = allowRules.find((a) => a.test(real))?.rule ?? wholeTool;
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else allOk = false;
    }
    if (allOk && used.length > 0) f.allow ??= { reason: `allowed by ${used.map((r) => r.raw).join(', ')}`, rules: used };
  }

  /** Rules, protected places and roots for one written file; returns its real location. */
  private writeTarget(p: string, text: string, f: Findings, kinds: string[]): string {
    const real = realLocation(p);
    const lexical = resolve(p);
    const hit = (b: PermissionRule['behavior']) => this.pathRules(kinds, b).find((a) => a.test(real) || a.test(lexical))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    const prot = protectedReason(real, this.userSettingsPath) ?? protectedReason(lexical, this.userSettingsPath);
    if (prot) f.hardAsk.push(prot);
    if (this.insideRoots(real)) f.writesInside = true;
    else {
      f.softAsk.push(`writes outside the workspace (${text})`);
      f.risky.push('writes outside the workspace');
    }
    return real;
  }

  private bashContext() {
    return {
      parser: this.parser,
      rules: this.rules,
      home: this.home,
      checkWrite: (path: string | null, text: string, f: Findings) => {
        if (path === null) {
          f.softAsk.push(`writes to a file named only at run time (${text})`);
          return;
        }
        if (/^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/.test(path)) return;
        this.writeTarget(path, text, f, ['Edit', 'Write']);
      },
      checkRead: (path: string | null, _text: string, f: Findings) => {
        if (path !== null) this.readRules(path, realLocation(path), f);
      },
      readable: (abs: string) => this.insideRoots(realLocation(abs)) || /^\/dev\/null$/.test(abs),
    };
  }

  private checkNetwork(tool: string, url: string, f: Findings): void {
    f.readOnly = true;
    const host = realHost(url);
    for (const r of this.rules.all) {
      if (r.tool !== tool || r.specifier === undefined || !r.specifier.startsWith('domain:')) continue;
      if (host === null || !domainMatches(r.specifier.slice(7), host)) continue;
      if (r.behavior === 'deny') f.deny ??= { reason: `denied by ${r.raw}`, rule: r };
      else if (r.behavior === 'ask') f.ask ??= { reason: `${r.raw} asks`, rule: r };
      else f.allow ??= { reason: `allowed by ${r.raw}`, rules: [r] };
    }
    if (host === null) f.softAsk.push(`the URL ${url} has no host Keel can check`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

const DEFAULT_ASK: Record<PermissionSubject['kind'], string> = {
  read: 'reading outside the workspace',
  write: 'editing a file',
  execute: 'running a command no rule allows',
  network: 'fetching from the network',
  task: 'starting a subtask',
  mcp: 'calling an MCP tool',
};

/** Precedence: deny rules, plan mode (no changes), ask rules (and safety asks), the mode, allow rules, the user. */
export function combine(f: Findings, mode: PermissionMode, kind: PermissionSubject['kind']): EngineDecision {
  const withRule = (d: EngineDecision, r?: PermissionRule): EngineDecision => (r ? { ...d, rule: r.raw, source: r.source } : d);
  if (f.deny) return withRule({ decision: 'deny', reason: f.deny.reason }, f.deny.rule);
  // Plan mode makes no changes: nobody is asked to approve one (an ask rule or a safety ask
  // cannot turn a change into a question), as the permission machine's checkMode does.
  if (mode === 'plan' && !f.readOnly) return { decision: 'deny', reason: 'plan mode allows read-only tools only' };
  const risky = f.risky.length > 0 ? { risky: true } : {};
  const asking = (reason: string, r?: PermissionRule): EngineDecision =>
    withRule(mode === 'dontAsk' ? { decision: 'deny', reason: `${reason} (dontAsk mode denies what would ask)` } : { decision: 'ask', reason, ...risky }, r);
  if (f.ask) return asking(f.ask.reason, f.ask.rule);
  if (f.hardAsk.length > 0) return asking(f.hardAsk[0] as string);
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'bypassPermissions mode' };
  if (f.softAsk.length > 0) return asking(f.softAsk[0] as string);
  if (f.allow) {
    const rules = f.allow.rules;
    const first = rules[0];
    const allowed: EngineDecision = { decision: 'allow', reason: f.allow.reason, ...(first ? { rule: rules.map((r) => r.raw).join(', '), source: first.source } : {}) };
    if (kind !== 'execute' || !f.writesInside || !f.allow.onlyReadOnly) return allowed;
    if (mode === 'acceptEdits') return { decision: 'allow', reason: 'acceptEdits mode: read-only commands writing inside the workspace' };
    return asking('the command writes a file');
  }
  if (mode === 'acceptEdits' && kind === 'write' && f.writesInside) return { decision: 'allow', reason: 'acceptEdits mode: edit inside the workspace' };
  return asking(DEFAULT_ASK[kind]);
}
