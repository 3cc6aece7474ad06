import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadInstructions } from '../../../src/core/context/instructions';
import { HookRunner } from '../../../src/core/hooks/runner';
import { loadMcpConfig } from '../../../src/core/mcp/config';
import { createPermissionEngine, type EngineDecision } from '../../../src/core/permissions';
import { SettingsEnvironment } from '../../../src/core/permissions/settingsEnv';
import { parseToolInput } from '../../../src/core/tools/execute';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import type { TrustStatus } from '../../../src/core/trust/workspaceTrust';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';

/**
 * A real workspace on disk for the trust corpus (corpus.ts): files, links and a git repository
 * where a case asks for one, a home with Keel's home inside, and the real consumers of the
 * approvals (the permission engine, the hook runner, the MCP configuration, the instructions
 * loader, the settings' env) reading it as a run would.
 */
export class World {
  readonly root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-trust-corpus-')));
  ws = join(this.root, 'ws');
  readonly home = join(this.root, 'home');
  readonly keelHome = join(this.home, '.keel');
  readonly outside = join(this.root, 'outside');
  private restricted = false;
  private current: WorkspaceTrust | undefined;

  constructor() {
    for (const d of [this.ws, this.home, this.keelHome, this.outside]) mkdirSync(d, { recursive: true });
  }

  /** Writes a file of the workspace (relative) or anywhere (absolute). */
  write(path: string, text: string, mode?: number): void {
    const p = this.at(path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    if (mode !== undefined) chmodSync(p, mode);
  }

  json(path: string, value: unknown): void {
    this.write(path, JSON.stringify(value));
  }

  link(path: string, target: string): void {
    const p = this.at(path);
    mkdirSync(dirname(p), { recursive: true });
    rmSync(p, { force: true, recursive: true });
    symlinkSync(target, p);
  }

  rm(path: string): void {
    rmSync(this.at(path), { recursive: true, force: true });
  }

  mv(from: string, to: string): void {
    mkdirSync(dirname(this.at(to)), { recursive: true });
    renameSync(this.at(from), this.at(to));
  }

  /** Makes the workspace a git repository with one commit (as a clone leaves it). */
  git(): void {
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    execFileSync('git', ['init', '-q'], { cwd: this.ws, env });
    execFileSync('git', ['add', '-A'], { cwd: this.ws, env });
    execFileSync('git', ['commit', '-qm', 'init', '--allow-empty'], { cwd: this.ws, env });
  }

  at(path: string): string {
    return path.startsWith('/') ? path : join(this.ws, path);
  }

  /** VS Code's Restricted Mode for this world's trust. */
  setRestricted(on: boolean): void {
    this.restricted = on;
    this.current?.hostTrustChanged();
  }

  trust(): WorkspaceTrust {
    this.current ??= new WorkspaceTrust({ workspace: this.ws, keelHome: this.keelHome, home: this.home, restricted: () => this.restricted });
    return this.current;
  }

  /** A fresh view of the approvals (a new process). */
  reopen(): WorkspaceTrust {
    this.current?.dispose();
    this.current = undefined;
    return this.trust();
  }

  async approve(): Promise<void> {
    await this.trust().approve();
  }

  status(): TrustStatus {
    return this.trust().status();
  }

  /** Summaries of the items waiting for approval (new or changed). */
  pending(): string[] {
    return this.status().pending.map((i) => i.summary);
  }

  blocked(): string[] {
    return this.status().blocked.map((i) => i.summary);
  }

  approved(): string[] {
    return this.status().approved.map((i) => i.summary);
  }

  /** The decision a run would reach for one tool call (the real tool's subject, the real engine). */
  async decide(tool: string, input: Record<string, unknown>, mode: PermissionMode = 'default'): Promise<EngineDecision> {
    const trust = this.trust();
    const engine = await createPermissionEngine({ workspace: this.ws, home: this.home, trust, protectedFiles: () => trust.protectedFilesNow() });
    try {
      const parsed = parseToolInput(createToolRegistry(), tool, input);
      if (!parsed.ok) throw new Error(`bad input: ${JSON.stringify(parsed.result.content)}`);
      const subject = parsed.tool.subject(parsed.input as never, { workspace: this.ws });
      return await engine.decide({ tool, input: parsed.input, subject, readOnly: parsed.tool.readOnly }, mode);
    } finally {
      engine.dispose?.();
    }
  }

  /** The mode tasks start in from the settings files. */
  async startingMode(): Promise<PermissionMode | undefined> {
    const trust = this.trust();
    const engine = await createPermissionEngine({ workspace: this.ws, home: this.home, trust });
    try {
      return engine.defaultMode();
    } finally {
      engine.dispose?.();
    }
  }

  /** The commands of the hooks that may run now. */
  runnableHooks(): string[] {
    const runner = new HookRunner({ workspace: this.ws, trust: this.trust(), home: this.home, environment: () => ({}) });
    try {
      return runner.runnable().map((h) => h.command);
    } finally {
      runner.dispose();
    }
  }

  /** The environment a project MCP server would start with (its own part), or null when it cannot start. */
  mcpEnv(name: string): Record<string, string> | null {
    const s = loadMcpConfig({ workspace: this.ws, keelHome: this.keelHome, env: { PATH: process.env.PATH } }).servers.find((x) => x.name === name);
    return s?.resolved?.transport === 'stdio' ? s.resolved.env : null;
  }

  /** The instructions text a run would put in its system prompt. */
  instructions(): string {
    return loadInstructions({ workspace: this.ws, home: this.home, trust: this.trust() }).text;
  }

  /** The settings files' env a tool process gets. */
  settingsEnv(): Readonly<Record<string, string>> {
    const env = new SettingsEnvironment({ workspace: this.ws, home: this.home, trust: this.trust() });
    try {
      return env.current();
    } finally {
      env.dispose();
    }
  }

  dispose(): void {
    this.current?.dispose();
    rmSync(this.root, { recursive: true, force: true });
  }
}
