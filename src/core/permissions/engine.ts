import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { PermissionSubject } from '../tools/types';
import { checkBash, type BashContext } from './bashCheck';
import { emptyFindings, groupRules, type Findings, type RuleSet } from './findings';
import { compilePathPattern, isInside, protectedReason, realLocation, type PathBases } from './paths';
import { cachedFs } from './fsView';
import { resolvePhysical } from './physical';
import { domainMatches, mcpRuleMatches, realHost, type PermissionRule } from './rules';
import { defaultSources, explicitSource, loadSettings, stampOf, type LoadedSettings, type SettingsSource } from './settings';
import { acceptedEdit, allowedByMode, refusalOfChange, whenItWouldAsk } from './modes';
import { loadBashParser, WARM_UP } from './shell/parser';

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
  const engine = new RuleEngine(parser, opts);
  engine.warmUp();
  return engine;
}

class RuleEngine implements PermissionEngine {
  private readonly sources: SettingsSource[];
  private readonly home: string;
  private readonly workspaceReal: string;
  private settings!: LoadedSettings;
  private rules!: RuleSet;
  private roots: string[] = [];
  private readonly userSettingsPath: string;
  private readonly userSettingsReal: string;
  private readonly homeReal: string;
  /** Compiled Read/Edit/Write rules by behaviour and tools; emptied when the settings change. */
  private pathRuleCache = new Map<string, CompiledPathRule[]>();

  constructor(
    private readonly parser: Parser,
    private readonly opts: EngineOptions,
  ) {
    this.home = resolve(opts.home ?? homedir());
    const workspace = resolve(opts.workspace);
    this.workspaceReal = realLocation(workspace);
    this.homeReal = realLocation(this.home);
    this.userSettingsPath = opts.userSettingsPath ?? join(this.home, '.keel', 'settings.json');
    this.userSettingsReal = realLocation(this.userSettingsPath);
    this.sources = [...defaultSources(workspace, this.userSettingsPath), ...(opts.settingsFiles ?? []).map((f) => explicitSource(f, workspace))];
    this.reload();
  }

  /**
   * Checks a sample script twice and throws the answers away: the first decisions of a process
   * otherwise spend tens of milliseconds of CPU compiling the analysis code, which would count
   * against the analysis budget (bounds.ts) and could turn a first `ls` into a question.
   */
  warmUp(): void {
    for (let i = 0; i < 2; i++) {
      try {
        checkBash(this.bashContext(), WARM_UP, this.workspaceReal, emptyFindings());
      } catch {
        // A warm-up is an optimisation; decisions report their own failures.
      }
    }
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
      const d = whenItWouldAsk(mode, reason);
      return d.decision === 'ask' ? { ...d, risky: true } : d;
    }
  }

  private refresh(): void {
    if (stampOf(this.sources) !== this.settings.stamp) this.reload();
  }

  private reload(): void {
    this.settings = loadSettings(this.sources, this.home);
    this.rules = groupRules(this.settings.rules);
    this.roots = [this.workspaceReal, ...[...(this.opts.additionalDirectories ?? []), ...this.settings.additionalDirectories].map((d) => realLocation(resolve(this.opts.workspace, d)))];
    this.pathRuleCache = new Map();
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
    return { workspace: this.workspaceReal, home: this.homeReal };
  }

  /** Path rules of `kinds` with `behavior`, compiled once per settings version. */
  private pathRules(kinds: string[], behavior: PermissionRule['behavior']): CompiledPathRule[] {
    const key = `${behavior}:${kinds.join(',')}`;
    let compiled = this.pathRuleCache.get(key);
    if (!compiled) {
      compiled = this.rules.all
        .filter((r) => r.behavior === behavior && r.specifier !== undefined && kinds.includes(r.tool))
        .map((rule) => ({ rule, test: compilePathPattern(rule.specifier as string, realLocation(rule.projectRoot), this.bases()) }));
      this.pathRuleCache.set(key, compiled);
    }
    return compiled;
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
      const r = resolvePhysical(p);
      const real = r.ok ? r.path : null;
      this.readRules(p, real, f);
      // A search root (Glob, Grep) reads what is inside it.
      if (tool !== 'Read') this.readRules(join(p, '_'), real === null ? null : join(real, '_'), f);
      if (real === null) {
        allOk = false;
        continue;
      }
      const rule = allowRules.find((a) => a.test(real))?.rule ?? wholeTool;
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else if (!this.insideRoots(real)) allOk = false;
    }
    if (allOk) f.allow ??= { reason: used.length ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'reading inside the workspace', rules: used };
  }

  /** Read deny/ask rules, on where the path really leads and on the path as written (normalised). */
  private readRules(lexical: string, real: string | null, f: Findings): void {
    const written = resolve(lexical);
    const hit = (b: PermissionRule['behavior']) => this.pathRules(['Read'], b).find((a) => (real !== null && a.test(real)) || a.test(written))?.rule;
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
      const rule = real === null ? undefined : (allowRules.find((a) => a.test(real))?.rule ?? wholeTool);
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else allOk = false;
    }
    if (allOk && used.length > 0) f.allow ??= { reason: `allowed by ${used.map((r) => r.raw).join(', ')}`, rules: used };
  }

  /**
   * Rules, protected places and roots for one written file, at the place the kernel will write
   * (symlinks followed, dangling ones too: a write creates their target). Returns that place, or
   * null when it cannot be known (then it asks).
   */
  private writeTarget(p: string, text: string, f: Findings, kinds: string[]): string | null {
    const r = resolvePhysical(p);
    const real = r.ok ? r.path : null;
    const lexical = resolve(p);
    const hit = (b: PermissionRule['behavior']) => this.pathRules(kinds, b).find((a) => (real !== null && a.test(real)) || a.test(lexical))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    const places = { roots: this.roots, home: this.homeReal, userSettingsPath: this.userSettingsReal };
    const prot = (real !== null ? protectedReason(real, places) : null) ?? protectedReason(lexical, { ...places, home: this.home });
    if (prot) f.hardAsk.push(prot);
    if (!r.ok) {
      f.softAsk.push(`cannot tell which file ${text} writes: ${r.reason}`);
      f.risky.push('writes a file whose location cannot be resolved');
      return null;
    }
    if (this.insideRoots(r.path)) f.writesInside = true;
    else {
      f.softAsk.push(`writes outside the workspace (${text})`);
      f.risky.push('writes outside the workspace');
    }
    return real;
  }

  /** What the Bash check needs, with a file-system view and answers shared by this one decision. */
  private bashContext(): BashContext {
    const fs = cachedFs();
    const physical = new Map<string, ReturnType<typeof resolvePhysical>>();
    const readableSeen = new Map<string, boolean>();
    const readChecked = new Set<string>();
    const resolveOnce = (p: string) => {
      let r = physical.get(p);
      if (!r) {
        r = resolvePhysical(p, '/', fs);
        physical.set(p, r);
      }
      return r;
    };
    return {
      parser: this.parser,
      rules: this.rules,
      home: this.home,
      fs,
      checkWrite: (path: string | null, text: string, f: Findings) => {
        if (path === null) {
          f.softAsk.push(`writes to a file named only at run time (${text})`);
          return false;
        }
        if (/^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/.test(path)) return true;
        const real = this.writeTarget(path, text, f, ['Edit', 'Write']);
        if (real === null) return false;
        const whole = this.rules.all.some((r) => r.behavior === 'allow' && r.specifier === undefined && (r.tool === 'Edit' || r.tool === 'Write'));
        return whole || this.pathRules(['Edit', 'Write'], 'allow').some((a) => a.test(real));
      },
      checkRead: (path: string | null, _text: string, f: Findings) => {
        if (path === null || readChecked.has(path)) return;
        readChecked.add(path);
        const r = resolveOnce(path);
        this.readRules(path, r.ok ? r.path : null, f);
      },
      readable: (path: string) => {
        if (path === '/dev/null') return true;
        let ok = readableSeen.get(path);
        if (ok === undefined) {
          const r = resolveOnce(path);
          ok = r.ok && (this.insideRoots(r.path) || this.pathRules(['Read'], 'allow').some((a) => a.test(r.path)));
          readableSeen.set(path, ok);
        }
        return ok;
      },
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

interface CompiledPathRule {
  rule: PermissionRule;
  test: (p: string) => boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/**
 * Whether an "ask" of the engine (its `reason`, no `rule`) is only for want of an allow rule: no
 * ask rule, safety ask or mode made it ask, so an allow rule for the call would allow it.
 */
export function asksForWantOfARule(kind: PermissionSubject['kind'], decision: Pick<EngineDecision, 'reason' | 'rule'>): boolean {
  return decision.rule === undefined && decision.reason === DEFAULT_ASK[kind];
}

const DEFAULT_ASK: Record<PermissionSubject['kind'], string> = {
  read: 'reading outside the workspace',
  write: 'editing a file',
  execute: 'running a command no rule allows',
  network: 'fetching from the network',
  task: 'starting a subtask',
  mcp: 'calling an MCP tool',
};

/**
 * Precedence: deny rules, a read-only mode's refusal of changes, ask rules (and safety asks), the
 * mode, allow rules, the user. What each mode does is modes.ts's; this only orders it.
 */
export function combine(f: Findings, mode: PermissionMode, kind: PermissionSubject['kind']): EngineDecision {
  const withRule = (d: EngineDecision, r?: PermissionRule): EngineDecision => (r ? { ...d, rule: r.raw, source: r.source } : d);
  if (f.deny) return withRule({ decision: 'deny', reason: f.deny.reason }, f.deny.rule);
  // A mode that makes no changes asks nobody to approve one (an ask rule or a safety ask cannot
  // turn a change into a question), as the permission machine's checkMode does.
  const refused = refusalOfChange(mode, f.readOnly);
  if (refused) return refused;
  const risky = f.risky.length > 0 ? { risky: true } : {};
  const asking = (reason: string, r?: PermissionRule): EngineDecision => {
    const d = whenItWouldAsk(mode, reason);
    return withRule(d.decision === 'ask' ? { ...d, ...risky } : d, r);
  };
  if (f.ask) return asking(f.ask.reason, f.ask.rule);
  if (f.hardAsk.length > 0) return asking(f.hardAsk[0] as string);
  const byMode = allowedByMode(mode);
  if (byMode) return byMode;
  if (f.softAsk.length > 0) return asking(f.softAsk[0] as string);
  if (f.allow) {
    const rules = f.allow.rules;
    const first = rules[0];
    const allowed: EngineDecision = { decision: 'allow', reason: f.allow.reason, ...(first ? { rule: rules.map((r) => r.raw).join(', '), source: first.source } : {}) };
    if (kind !== 'execute' || !f.writesInside || !f.allow.unruledWrites) return allowed;
    return acceptedEdit(mode, 'read-only commands writing inside the workspace') ?? asking('the command writes a file');
  }
  const edit = kind === 'write' && f.writesInside ? acceptedEdit(mode, 'edit inside the workspace') : null;
  return edit ?? asking(DEFAULT_ASK[kind]);
}
