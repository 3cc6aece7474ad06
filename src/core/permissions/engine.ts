import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { PermissionSubject, SearchExclusions } from '../tools/types';
import { checkBash, type BashContext } from './bashCheck';
import { emptyFindings, groupRules, type Findings, type RuleSet } from './findings';
import { compilePathPattern, realLocation, type PathBases } from './paths';
import { cachedFs } from './fsView';
import { PathPolicy, type CompiledPathRule, type PolicyPlaces, type PolicyRules } from './pathPolicy';
import { domainMatches, mcpRuleMatches, realHost, type PermissionRule } from './rules';
import { defaultSources, explicitSource, loadSettings, stampOf, type LoadedSettings, type SettingsSource } from './settings';
import { FileWatch } from './settingsWatch';
import type { TrustView } from '../trust/items';
import { acceptedEdit, allowedByMode, refusalOfChange, whenItWouldAsk } from './modes';
import { markAnalysisWarm } from './shell/bounds';
import { loadBashParser, WARM_UP } from './shell/parser';

/** The analysis code is compiled once per process (see `warmUp`). */
let warmedUp = false;

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
  /** Stops watching the settings files (the engine keeps deciding, re-reading them every time). */
  dispose?(): void;
  /**
   * What a recursive search below `root` (the Grep and Glob tools) must skip so that it reads
   * nothing a Read deny or ask rule covers: ripgrep globs anchored at the physical folder `root`
   * leads to (pass each as `--glob !GLOB`, with ripgrep run from that folder), and the rules
   * behind them. Null when they cannot be written as globs; `decide` then asks about the search.
   * Never rejects.
   */
  searchExclusions(root: string): Promise<SearchExclusions | null>;
}

export type { SearchExclusions } from '../tools/types';

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
  /**
   * Files the caller protects besides Keel's own protected places (protectedPlaces.ts), as
   * absolute paths, each with the reason the person is shown: e.g. the scripts that approved hooks
   * and MCP servers run, which must not be rewritten behind the person's back. A model's write to
   * one asks in every mode, bypassPermissions included, however it is reached: the Write and Edit
   * tools, a redirection, a file command's operand, a symlink or a hard link to it, a case or
   * trailing-dot variant of its name. Called at every decision, so a list that changes (a hook
   * approved later) applies at once; keep it cheap. A call that throws is treated as no extra files.
   */
  protectedFiles?: () => ReadonlyMap<string, string>;
  /**
   * The person's approvals of this workspace (docs/permissions.md, "Trust"): a workspace file's
   * allow rules, additional directories and looser mode apply only once approved. Required, so
   * that no host forgets it; `NOTHING_APPROVED` applies only what tightens.
   */
  trust: TrustView;
}

/** Builds the engine: loads the shell parser once and reads the settings files. Rejects only if the parser cannot load. */
export async function createPermissionEngine(opts: EngineOptions): Promise<PermissionEngine> {
  const parser = await loadBashParser();
  const engine = new RuleEngine(parser, opts);
  // Compiling the analysis code is left for when the process is idle: a first decision made at
  // once does not wait for it (its budget allows for compiling, bounds.ts).
  setImmediate(() => engine.warmUp()).unref();
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
  /** Where the settings files really are (protected places), found again when they change. */
  private settingsFilesReal: string[] = [];
  /** Compiled Read/Edit/Write rules by behaviour and tools; emptied when the settings change. */
  private pathRuleCache = new Map<string, CompiledPathRule[]>();
  private readonly watch: FileWatch;
  private trustVersion = -1;

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
    this.watch = new FileWatch(
      this.sources.map((s) => s.path),
      () => stampOf(this.sources),
    );
    this.reload();
  }

  dispose(): void {
    this.watch.dispose();
  }

  /**
   * Checks a sample script twice and throws the answers away: the first decisions of a process
   * otherwise spend tens of milliseconds of CPU compiling the analysis code. Until this ran,
   * analyses get a larger budget (bounds.ts), so that a first `ls` is never a question.
   */
  warmUp(): void {
    if (warmedUp) return;
    warmedUp = true;
    for (let i = 0; i < 2; i++) {
      try {
        checkBash(this.bashContext(), WARM_UP, this.workspaceReal, emptyFindings());
      } catch {
        // A warm-up is an optimisation; decisions report their own failures.
      }
    }
    markAnalysisWarm();
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
      // Changes already written are reported by the watcher before this resolves (settingsWatch.ts).
      await FileWatch.settled();
      this.refresh();
      return this.decideNow(call, mode);
    } catch (err) {
      const reason = `the permission check failed (${err instanceof Error ? err.message : String(err)})`;
      const d = whenItWouldAsk(mode, reason);
      return d.decision === 'ask' ? { ...d, risky: true } : d;
    }
  }

  /** Re-reads the settings when a file changed (watched) or an approval changed. */
  private refresh(): void {
    const changed = this.watch.changed();
    if (changed || this.opts.trust.version() !== this.trustVersion) this.reload();
  }

  private reload(): void {
    this.trustVersion = this.opts.trust.version();
    this.settings = loadSettings(this.sources, this.home, this.opts.trust);
    this.settingsFilesReal = [this.userSettingsReal, ...this.sources.map((s) => realLocation(s.path))];
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
  private pathRules(kinds: readonly string[], behavior: PermissionRule['behavior']): CompiledPathRule[] {
    const key = `${behavior}:${kinds.join(',')}`;
    let compiled = this.pathRuleCache.get(key);
    if (!compiled) {
      compiled = this.rules.all
        .filter((r) => r.behavior === behavior && r.specifier !== undefined && kinds.includes(r.tool))
        .map((rule) => ({ rule, pattern: compilePathPattern(rule.specifier as string, realLocation(rule.projectRoot), this.bases()) }));
      this.pathRuleCache.set(key, compiled);
    }
    return compiled;
  }

  private readonly policyRules: PolicyRules = {
    pathRules: (kinds, behavior) => this.pathRules(kinds, behavior),
    wholeTool: (tools) => this.rules.all.find((r) => r.behavior === 'allow' && r.specifier === undefined && tools.includes(r.tool)),
  };

  /** The path checks of one decision (protectedPlaces.ts, pathPolicy.ts), on `fs`. */
  private policy(fs = cachedFs()): PathPolicy {
    let extra: ReadonlyMap<string, string> = new Map();
    try {
      extra = this.opts.protectedFiles?.() ?? extra;
    } catch {
      // The caller's list is an addition; Keel's own places stay protected without it.
    }
    let files: readonly string[] = this.settingsFilesReal;
    const reasons = new Map<string, string>();
    if (extra.size > 0) {
      const more: string[] = [];
      for (const [p, reason] of extra) {
        const real = realLocation(resolve(p));
        more.push(real);
        reasons.set(real, reason);
      }
      files = [...this.settingsFilesReal, ...more];
    }
    const places: PolicyPlaces = { roots: this.roots, home: this.home, homeReal: this.homeReal, files, reasons };
    return new PathPolicy(this.policyRules, places, fs);
  }

  async searchExclusions(root: string): Promise<SearchExclusions | null> {
    try {
      this.refresh();
      const policy = this.policy();
      const r = policy.resolve(resolve(root));
      if (!r.ok) return null;
      const ex = policy.searchExclusions(r.path);
      return ex ? { root: r.path, ...ex } : null;
    } catch {
      return null;
    }
  }

  /** The Read tool reads its file; Glob and Grep search below their root, skipping what Read rules keep out. */
  private checkReads(tool: string, paths: string[], f: Findings): void {
    f.readOnly = true;
    const policy = this.policy();
    const wholeTool = this.rules.all.find((r) => r.behavior === 'allow' && r.specifier === undefined && r.tool === tool);
    const allowRules = this.pathRules(['Read'], 'allow');
    const used: PermissionRule[] = [];
    let allOk = true;
    for (const p of paths) {
      let ok = policy.read(p, f);
      const r = policy.resolve(p);
      if (tool !== 'Read') {
        // A search root reads what is inside it: the root's own rules, then every rule that may
        // match below it must be expressible as an exclusion the tool passes to ripgrep.
        policy.readRules(join(p, '_'), r.ok ? join(r.path, '_') : null, f);
        if (r.ok && !f.deny && policy.searchExclusions(r.path) === null) ok = policy.search(p, tool, f) && ok;
      }
      if (!r.ok) {
        allOk = false;
        continue;
      }
      const rule = allowRules.find((a) => a.pattern.test(r.path))?.rule ?? wholeTool;
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else if (!ok) allOk = false;
    }
    if (allOk) f.allow ??= { reason: used.length ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'reading inside the workspace', rules: used };
  }

  private checkWrites(tool: string, paths: string[], f: Findings): void {
    const kinds = tool === 'Write' ? ['Edit', 'Write'] : ['Edit'];
    const policy = this.policy();
    const used: PermissionRule[] = [];
    let allOk = true;
    for (const p of paths) {
      const v = policy.write(p, p, f, kinds);
      if (v.allowedBy) {
        if (!used.includes(v.allowedBy)) used.push(v.allowedBy);
      } else allOk = false;
    }
    if (allOk && used.length > 0) f.allow ??= { reason: `allowed by ${used.map((r) => r.raw).join(', ')}`, rules: used };
  }

  /** What the Bash check needs, with a file-system view and answers shared by this one decision. */
  private bashContext(): BashContext {
    const fs = cachedFs();
    return { parser: this.parser, rules: this.rules, home: this.home, fs, policy: this.policy(fs) };
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
