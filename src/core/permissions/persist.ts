import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import lockfile from 'proper-lockfile';
import type { PermissionSubject } from '../tools/types';
import { parseRule } from './rules';
import { analyzeShell } from './shell/analyze';
import { planCommand } from './shell/commandPlan';
import { loadedBashParser } from './shell/parser';
import { errorMessage } from '../../shared/domain/errors';

/**
 * "Always allow": what rule to suggest for a call, and writing a rule into a settings file.
 */
export interface SuggestCall {
  tool: string;
  subject: PermissionSubject;
  workspace: string;
  home?: string;
}

const SUBCOMMAND_TOOLS = new Set([
  ...['git', 'npm', 'pnpm', 'yarn', 'bun', 'cargo', 'go', 'docker', 'kubectl', 'pip', 'pip3', 'make'],
  ...['npx', 'uv', 'poetry', 'dotnet', 'gradle', 'mvn', 'deno', 'terraform', 'helm', 'gh'],
]);

/** The rules "Always allow" would save, one per distinct command of a compound Bash command. */
export function suggestRules(call: SuggestCall): string[] {
  const s = call.subject;
  const home = call.home ?? homedir();
  switch (s.kind) {
    case 'execute': {
      const parser = loadedBashParser();
      if (!parser) return [`Bash(${s.command})`];
      const a = analyzeShell(parser, s.command, s.cwd, home);
      if (!a.parsed) return [`Bash(${s.command})`];
      const out: string[] = [];
      for (const cmd of a.commands) {
        const plan = planCommand(cmd);
        if (plan.opaque.length > 0 || plan.scripts.length > 0 || plan.denyScripts.length > 0) {
          if (!out.includes(`Bash(${cmd.text})`)) out.push(`Bash(${cmd.text})`);
          continue;
        }
        for (const form of plan.allowForms) {
          const words = form.words.map((w) => (w.dynamic ? null : w.value));
          const stop = words.findIndex((w, i) => w === null || (form.inlineAt !== undefined && i > form.inlineAt));
          const lit = (stop < 0 ? words : words.slice(0, stop)) as string[];
          const name = lit[0];
          if (!name) continue;
          let rule: string;
          if (form.inlineAt !== undefined || (stop < 0 && lit.length <= 1 && !form.openEnded)) rule = `Bash(${lit.map(quote).join(' ')})`;
          else if ((name === 'npm' || name === 'pnpm' || name === 'yarn' || name === 'bun') && lit[1] === 'run' && lit[2]) rule = `Bash(${name} run ${quote(lit[2])}:*)`;
          else if (SUBCOMMAND_TOOLS.has(name) && lit[1] && !lit[1].startsWith('-')) rule = `Bash(${name} ${quote(lit[1])}:*)`;
          else rule = `Bash(${quote(name)}:*)`;
          if (!out.includes(rule)) out.push(rule);
        }
      }
      return out.length > 0 ? out : [`Bash(${s.command})`];
    }
    case 'read':
    case 'write': {
      const tool = s.kind === 'read' ? 'Read' : 'Edit';
      return [...new Set(s.paths.map((p) => `${tool}(${pathPattern(p, call.workspace, home)})`))];
    }
    case 'network': {
      try {
        return [`${call.tool}(domain:${new URL(s.url).hostname})`];
      } catch {
        return [call.tool];
      }
    }
    default:
      return [call.tool];
  }
}

/** The first of `suggestRules` (what a one-line prompt shows). */
export function suggestRule(call: SuggestCall): string {
  return suggestRules(call)[0] ?? call.tool;
}

function quote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

function pathPattern(abs: string, workspace: string, home: string): string {
  const dir = dirname(abs);
  const inWs = relative(resolve(workspace), dir);
  if (inWs === '') return `./${abs.slice(dir.length + 1)}`;
  if (!inWs.startsWith('..') && !inWs.startsWith(sep)) return `./${inWs.split(sep).join('/')}/**`;
  const inHome = relative(home, dir);
  if (!inHome.startsWith('..') && !inHome.startsWith(sep) && inHome !== '') return `~/${inHome.split(sep).join('/')}/**`;
  return `/${dir}/**`;
}

export interface SaveRuleOptions {
  workspace: string;
  /** User settings file. Default ~/.keel/settings.json. */
  userSettingsPath?: string;
  home?: string;
  /** Which list; default allow. */
  behavior?: 'allow' | 'ask' | 'deny';
}

/**
 * Adds `rule` (or rules) to `.keel/settings.json` (project), `.keel/settings.local.json` (local,
 * kept out of git by `.keel/.gitignore`) or the user settings. Idempotent. Rejects on a malformed
 * rule or a settings file that is not valid JSON (it is never overwritten).
 */
export async function saveRule(rule: string | string[], where: 'project' | 'local' | 'user', opts: SaveRuleOptions): Promise<void> {
  const rules = Array.isArray(rule) ? rule : [rule];
  for (const r of rules) {
    const p = parseRule(r);
    if (!p.ok) throw new Error(`not a valid rule: ${p.error}`);
  }
  const home = opts.home ?? homedir();
  const file =
    where === 'user' ? (opts.userSettingsPath ?? join(home, '.keel', 'settings.json')) : join(opts.workspace, '.keel', where === 'local' ? 'settings.local.json' : 'settings.json');
  mkdirSync(dirname(file), { recursive: true });
  if (where === 'local') {
    const gi = join(dirname(file), '.gitignore');
    if (!existsSync(gi)) writeFileSync(gi, 'settings.local.json\n');
  }
  if (!existsSync(file)) writeFileSync(file, '{}\n');
  const release = await lockfile.lock(file, { retries: { retries: 20, minTimeout: 20, maxTimeout: 200 }, stale: 10_000 });
  try {
    const text = readFileSync(file, 'utf8');
    let json: unknown;
    try {
      json = text.trim() ? JSON.parse(text) : {};
    } catch (err) {
      throw new Error(`${file} is not valid JSON (${errorMessage(err)}); fix it before saving rules`);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${file} does not hold a JSON object`);
    const obj = json as Record<string, unknown>;
    const perms = (typeof obj.permissions === 'object' && obj.permissions !== null ? obj.permissions : {}) as Record<string, unknown>;
    const key = opts.behavior ?? 'allow';
    const list = Array.isArray(perms[key]) ? (perms[key] as unknown[]) : [];
    for (const r of rules) if (!list.includes(r)) list.push(r);
    perms[key] = list;
    obj.permissions = perms;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(obj, null, 2)}\n`);
    renameSync(tmp, file);
  } finally {
    await release();
  }
}
