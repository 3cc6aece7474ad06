import type { Parser } from 'web-tree-sitter';
import type { FsView } from './fsView';
import { operandPaths } from './operands';
import { isReadOnlyCommand } from './readOnlyCommands';
import type { Findings, RuleSet } from './findings';
import { compileBashPattern, type BashPattern, type PermissionRule } from './rules';
import { analyzeShell, type ShellAnalysis } from './shell/analyze';
import { AnalysisBudget } from './shell/bounds';
import { planCommand, type CommandForm, type CommandPlan } from './shell/commandPlan';

/** What the Bash check needs from the engine. */
export interface BashContext {
  parser: Parser;
  rules: RuleSet;
  home: string;
  /** The file system as this decision sees it (answers shared across the decision). */
  fs: FsView;
  /** Verdict on a file a redirection writes (rules, protected places, inside the roots). */
  checkWrite(path: string | null, text: string, f: Findings): void;
  /**
   * True when a read-only command (or an input redirection) may read `path` without asking: it
   * resolves physically inside the roots or under a Read allow rule. `path` is absolute and may
   * hold `..` and symlinks (it is resolved as the kernel would).
   */
  readable(path: string): boolean;
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
  /** Every directory each plan's command may run in (same order as `plans`); null: unknown. */
  cwds: (string[] | null)[];
  opaque: string[];
}

function collect(ctx: BashContext, source: string, cwd: string | null, depth: number, into: Collected, budget: AnalysisBudget): void {
  if (cwd === null) {
    into.opaque.push('an inline script runs in a directory known only at run time');
    return;
  }
  const a = analyzeShell(ctx.parser, source, cwd, ctx.home, budget, ctx.fs);
  into.analyses.push(a);
  for (const cmd of a.commands) {
    const plan = planCommand(cmd);
    into.plans.push(plan);
    into.cwds.push(cmd.cwds);
    for (const s of plan.scripts) {
      if (depth >= 4) into.opaque.push('inline scripts nested too deeply');
      else collect(ctx, s.source, s.cwd, depth + 1, into, budget);
    }
  }
}

/** Commands that change the shell's directory (tracked by the analysis) and read nothing. */
const DIRECTORY_BUILTINS = new Set(['cd', 'pushd', 'popd', 'dirs']);
/** Redirection targets that are not files: output thrown away or sent where it goes anyway. */
const DISCARD = /^\/dev\/(null|stdout|stderr|fd\/[12])$/;

/** Checks one Bash command. Fills `f`; never throws. */
export function checkBash(ctx: BashContext, command: string, cwd: string, f: Findings): void {
  const c: Collected = { analyses: [], plans: [], cwds: [], opaque: [] };
  // One deadline for the whole analysis, nested scripts included (bounds.ts).
  const budget = new AnalysisBudget();
  collect(ctx, command, cwd, 0, c, budget);
  // tree-sitter-bash and bash disagree on a line continuation inside a word (`gi\<newline>t`):
  // check the joined form too, and allow only what both readings allow.
  if (/\\\r?\n/.test(command)) collect(ctx, command.replace(/\\\r?\n/g, ''), cwd, 0, c, budget);
  const { deny, ask, allow } = ctx.rules.bash;
  for (const a of c.analyses) {
    for (const t of [...a.writes, ...a.reads]) {
      if (!t.network) continue;
      c.opaque.push(`${t.text} opens a network connection`);
      f.risky.push('opens a network connection (/dev/tcp, /dev/udp)');
    }
    if (a.limit) {
      c.opaque.push(a.limit);
      f.risky.push(a.limit);
    } else if (!a.parsed) {
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
  // Files read by redirection (`< file`) pass the same check as a read-only command's operands.
  let redirectReadsOk = true;
  for (const a of c.analyses) {
    for (const w of a.writes) {
      if (w.path !== null && DISCARD.test(w.path)) continue; // `2>/dev/null` writes nothing
      writes++;
      if (!w.network) ctx.checkWrite(w.path, w.text, f);
    }
    for (const r of a.reads) {
      if (r.network) continue;
      ctx.checkRead(r.path, r.text, f);
      if (r.path === null || !ctx.readable(r.path)) redirectReadsOk = false;
    }
  }
  let allReadOnly = c.opaque.length === 0 && writes === 0 && redirectReadsOk;
  let allAllowed = c.opaque.length === 0;
  const used: PermissionRule[] = [];
  let outOfTime = false;
  c.plans.forEach((p, i) => {
    if (outOfTime || (outOfTime = budget.expired())) return;
    const cwds = c.cwds[i] ?? null;
    // A command reads relative to its directory (ls, find, grep -r…): that must be readable too
    // (not for cd and friends, which only move, and whose moves are tracked).
    const cwdReadable = cwds !== null && cwds.every((d) => ctx.readable(d));
    for (const form of p.allowForms) {
      const cwdOk = redirectReadsOk && (cwdReadable || DIRECTORY_BUILTINS.has(form.words[0]?.value ?? ''));
      const operandsOk = isReadOnlyCommand(form, (v) => {
        const paths = operandPaths(v, cwds, ctx.home, ctx.readable, ctx.fs, (n) => budget.spendEntries(n));
        if (paths === null) return false;
        let ok = true;
        for (const path of paths) {
          ctx.checkRead(path, v, f);
          if (!ctx.readable(path)) ok = false;
        }
        return ok;
      });
      const readOnly = operandsOk && cwdOk;
      if (!readOnly) allReadOnly = false;
      const rule = allow.find((r) => bashRuleMatches(r, form));
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else if (!readOnly) allAllowed = false;
    }
  });
  if (outOfTime) {
    const why = 'the command took too long to check';
    if (deny.some((r) => r.specifier !== undefined)) f.hardAsk.push(why);
    else if (!wholeTool) f.softAsk.push(why);
    f.risky.push(why);
    allReadOnly = false;
    allAllowed = false;
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
