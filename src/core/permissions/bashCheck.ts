import { isAbsolute, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { isHarmlessVariable, isReadOnlyCommand } from './readOnlyCommands';
import type { Findings, RuleSet } from './findings';
import { compileBashPattern, type BashPattern, type PermissionRule } from './rules';
import { analyzeShell, type ShellAnalysis } from './shell/analyze';
import { planCommand, type CommandForm, type CommandPlan } from './shell/commandPlan';

/** What the Bash check needs from the engine. */
export interface BashContext {
  parser: Parser;
  rules: RuleSet;
  home: string;
  /** Verdict on a file a redirection writes (rules, protected places, inside the roots). */
  checkWrite(path: string | null, text: string, f: Findings): void;
  /** True when a read-only command may read `absPath` without asking. */
  readable(absPath: string): boolean;
  /** Read deny/ask rules on a file read by redirection or a read-only command. */
  checkRead(path: string | null, text: string, f: Findings): void;
}

const compiled = new Map<string, BashPattern>();
function patternOf(rule: PermissionRule): BashPattern {
  const spec = rule.specifier ?? '';
  let p = compiled.get(spec);
  if (!p) {
    p = compileBashPattern(spec);
    compiled.set(spec, p);
  }
  return p;
}

/** Does a Bash rule match one command form? Computed words never match literal rule words. */
export function bashRuleMatches(rule: PermissionRule, form: CommandForm): boolean {
  if (rule.specifier === undefined) return true;
  const p = patternOf(rule);
  const words = form.words;
  if (p.kind === 'exact') {
    if (form.openEnded || words.length !== p.words.length) return false;
    return words.every((w, i) => !w.dynamic && !w.glob && w.value === p.words[i]);
  }
  if (p.kind === 'prefix') {
    if (p.words.length === 0 || words.length < p.words.length) return false;
    if (form.inlineAt !== undefined && form.inlineAt >= p.words.length) return false;
    return p.words.every((pw, i) => {
      const w = words[i];
      return !!w && !w.dynamic && !w.glob && w.value === pw;
    });
  }
  if (form.inlineAt !== undefined && form.inlineAt >= p.literalWords.length) return false;
  if (words.some((w) => w.dynamic)) return false;
  const joined = words.map((w) => w.value).join(' ');
  return p.regex.test(form.openEnded ? `${joined} \u0001` : joined) && (!form.openEnded || p.regex.test(`${joined} x`));
}

interface Collected {
  analyses: ShellAnalysis[];
  plans: CommandPlan[];
  opaque: string[];
}

function collect(ctx: BashContext, source: string, cwd: string | null, depth: number, into: Collected): void {
  if (cwd === null) {
    into.opaque.push('an inline script runs in a directory known only at run time');
    return;
  }
  const a = analyzeShell(ctx.parser, source, cwd, ctx.home);
  into.analyses.push(a);
  for (const cmd of a.commands) {
    const plan = planCommand(cmd, ctx.home);
    into.plans.push(plan);
    for (const s of plan.scripts) {
      if (depth >= 4) into.opaque.push('inline scripts nested too deeply');
      else collect(ctx, s.source, s.cwd, depth + 1, into);
    }
  }
}

/** Checks one Bash command. Fills `f`; never throws. */
export function checkBash(ctx: BashContext, command: string, cwd: string, f: Findings): void {
  const c: Collected = { analyses: [], plans: [], opaque: [] };
  collect(ctx, command, cwd, 0, c);
  // tree-sitter-bash and bash disagree on a line continuation inside a word (`gi\<newline>t`):
  // check the joined form too, and allow only what both readings allow.
  if (/\\\r?\n/.test(command)) collect(ctx, command.replace(/\\\r?\n/g, ''), cwd, 0, c);
  const { deny, ask, allow } = ctx.rules.bash;
  for (const a of c.analyses) {
    if (!a.parsed) {
      c.opaque.push('the command does not parse as bash');
      f.risky.push('the command could not be parsed');
    }
    c.opaque.push(...a.blockers);
  }
  for (const p of c.plans) {
    c.opaque.push(...p.opaque);
    f.risky.push(...p.risky);
    for (const form of p.denyForms) {
      const d = deny.find((r) => bashRuleMatches(r, form));
      if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
      const k = ask.find((r) => bashRuleMatches(r, form));
      if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    }
  }
  const wholeTool = allow.find((r) => r.specifier === undefined);
  if (c.opaque.length > 0) {
    const specificDeny = deny.find((r) => r.specifier !== undefined);
    if (specificDeny) f.hardAsk.push(`${c.opaque[0]}, so ${specificDeny.raw} cannot be ruled out`);
    else if (!wholeTool) f.softAsk.push(c.opaque[0] as string);
  }
  let writes = 0;
  // Files written or read by redirections, and by wrappers (`time -o F`, `flock F`, `xargs -a F`).
  for (const x of [...c.analyses, ...c.plans]) {
    for (const w of x.writes) {
      writes++;
      ctx.checkWrite(w.path, w.text, f);
    }
    for (const r of x.reads) ctx.checkRead(r.path, r.text, f);
  }
  let allReadOnly = c.opaque.length === 0 && writes === 0;
  let allAllowed = c.opaque.length === 0;
  const used: PermissionRule[] = [];
  // A variable set as a statement reaches later commands if exported (or already in the
  // environment, as upper-case names usually are): only harmless ones keep commands read-only.
  const envChanged = c.analyses.some((a) => a.assigns.some((v) => !isHarmlessVariable(v.name) && (v.declared || !/[a-z]/.test(v.name))));
  for (const a of c.analyses) {
    for (const cmd of a.commands) {
      if (cmd.cwd === null) allReadOnly = false;
    }
  }
  for (const p of c.plans) {
    for (const form of p.allowForms) {
      const cwd = form.cwd === undefined ? p.cwd : form.cwd;
      const readOnly = !envChanged && isReadOnlyCommand(form, {
        cwd,
        home: ctx.home,
        pathOk: (v) => {
          const abs = resolveArg(v, ctx.home, cwd);
          if (abs === null || !ctx.readable(abs)) return false;
          ctx.checkRead(abs, v, f);
          return true;
        },
      });
      if (!readOnly) allReadOnly = false;
      const rule = allow.find((r) => bashRuleMatches(r, form));
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else if (!readOnly) allAllowed = false;
    }
  }
  f.readOnly = allReadOnly;
  f.writesInside = writes > 0;
  if (wholeTool) {
    f.allow = { reason: `allowed by ${wholeTool.raw}`, rules: [wholeTool] };
    return;
  }
  if (allAllowed) {
    const reason = used.length > 0 ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'read-only commands';
    f.allow = { reason, rules: used, onlyReadOnly: used.length === 0 };
  }
}

function resolveArg(v: string, home: string, cwd: string | null): string | null {
  if (v === '~' || v.startsWith('~/')) return resolve(home + v.slice(1));
  if (v.startsWith('~')) return null;
  if (isAbsolute(v)) return resolve(v);
  return cwd === null ? null : resolve(cwd, v);
}
