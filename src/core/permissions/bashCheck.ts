import type { Parser } from 'web-tree-sitter';
import type { FsView } from './fsView';
import { operandPaths } from './operands';
import { isHarmlessVariable, isReadOnlyCommand, isReadOnlyProgram } from './readOnlyCommands';
import type { Findings, RuleSet } from './findings';
import { compileBashPattern, type BashPattern, type PermissionRule } from './rules';
import { analyzeShell, type ShellAnalysis } from './shell/analyze';
import { AnalysisBudget } from './shell/bounds';
import { planCommand, type CommandForm, type CommandPlan, type InlineScript } from './shell/commandPlan';
import type { FileTarget } from './shell/redirects';

/** What the Bash check needs from the engine. */
export interface BashContext {
  parser: Parser;
  rules: RuleSet;
  home: string;
  /** The file system as this decision sees it (answers shared across the decision). */
  fs: FsView;
  /**
   * Verdict on a file a redirection writes (rules, protected places, inside the roots); true when
   * an Edit/Write allow rule covers the file the kernel will write (a Bash rule never does).
   */
  checkWrite(path: string | null, text: string, f: Findings): boolean;
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

/** One command found anywhere in the call (nested scripts included). */
interface PlanEntry {
  plan: CommandPlan;
  /**
   * The plan whose allowance covers this one's files: itself, or, for a command run by a runner
   * (`strace sh -c 'cmd > f'`), the runner's plan, which is what a rule allows.
   */
  owner: number;
  /** Run by a runner: only its deny forms count (the runner's own form is what must be allowed). */
  denyOnly: boolean;
}

interface AnalysisEntry {
  a: ShellAnalysis;
  /** Plan index of each of `a.commands`. */
  plans: number[];
  /** Set for a runner's script: every file of it belongs to that plan. */
  owner: number | null;
}

interface Collected {
  analyses: AnalysisEntry[];
  plans: PlanEntry[];
  opaque: string[];
}

function collect(ctx: BashContext, source: string, cwd: string | null, depth: number, into: Collected, budget: AnalysisBudget, owner: number | null): void {
  if (cwd === null) {
    into.opaque.push('an inline script runs in a directory known only at run time');
    return;
  }
  const a = analyzeShell(ctx.parser, source, cwd, ctx.home, budget, ctx.fs);
  const entry: AnalysisEntry = { a, plans: [], owner };
  into.analyses.push(entry);
  const nested = (scripts: InlineScript[], scriptOwner: number | null) => {
    for (const s of scripts) {
      if (depth >= 4) into.opaque.push('inline scripts nested too deeply');
      else collect(ctx, s.source, s.cwd, depth + 1, into, budget, scriptOwner);
    }
  };
  for (const cmd of a.commands) {
    const plan = planCommand(cmd, ctx.fs);
    const i = into.plans.length;
    into.plans.push({ plan, owner: owner ?? i, denyOnly: owner !== null });
    entry.plans.push(i);
    nested(plan.scripts, owner);
    nested(plan.denyScripts, owner ?? i);
  }
}

/** A file the call opens, with the plans whose allowance must cover it (empty: none, `> f` alone). */
interface AttributedFile {
  target: FileTarget;
  owners: number[];
}

/** Every file the call's redirections, wrappers and runners open, each with its commands. */
function attributedFiles(c: Collected, kind: 'reads' | 'writes'): AttributedFile[] {
  const out: AttributedFile[] = [];
  for (const e of c.analyses) {
    for (const target of e.a[kind]) {
      const owners = e.owner !== null ? [e.owner] : (target.commands ?? []).map((k) => c.plans[e.plans[k] as number]?.owner as number);
      out.push({ target, owners });
    }
  }
  c.plans.forEach((p) => {
    for (const target of p.plan[kind]) out.push({ target, owners: [p.owner] });
  });
  return out;
}

/** Commands that change the shell's directory (tracked by the analysis) and read nothing. */
const DIRECTORY_BUILTINS = new Set(['cd', 'pushd', 'popd', 'dirs']);
/** Redirection targets that are not files: output thrown away or sent where it goes anyway. */
const DISCARD = /^\/dev\/(null|stdout|stderr|fd\/[12])$/;

/** Checks one Bash command. Fills `f`; never throws. */
export function checkBash(ctx: BashContext, command: string, cwd: string, f: Findings): void {
  const c: Collected = { analyses: [], plans: [], opaque: [] };
  // One deadline for the whole analysis, nested scripts included (bounds.ts).
  const budget = new AnalysisBudget();
  collect(ctx, command, cwd, 0, c, budget, null);
  // tree-sitter-bash and bash disagree on a line continuation inside a word (`gi\<newline>t`):
  // check the joined form too, and allow only what both readings allow.
  if (/\\\r?\n/.test(command)) collect(ctx, command.replace(/\\\r?\n/g, ''), cwd, 0, c, budget, null);
  const { deny, ask, allow } = ctx.rules.bash;
  for (const { a } of c.analyses) {
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
  for (const { plan: p } of c.plans) {
    c.opaque.push(...p.opaque);
    f.risky.push(...p.risky);
    for (const form of p.denyForms) {
      const d = deny.find((r) => bashRuleMatches(r, form));
      if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
      const k = ask.find((r) => bashRuleMatches(r, form));
      if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    }
    // A program Keel does not know may run what follows it: a deny or ask rule on that asks.
    for (const { program, form } of p.suspectForms) {
      if (isReadOnlyProgram(program)) continue;
      const r = deny.find((x) => bashRuleMatches(x, form)) ?? ask.find((x) => bashRuleMatches(x, form));
      if (!r) continue;
      f.hardAsk.push(`${form.words.map((w) => w.text).join(' ')} may be run as a command, and ${r.raw} applies to it`);
      break;
    }
  }
  const wholeTool = allow.find((r) => r.specifier === undefined);
  if (c.opaque.length > 0) {
    const specificDeny = deny.find((r) => r.specifier !== undefined);
    if (specificDeny) f.hardAsk.push(`${c.opaque[0]}, so ${specificDeny.raw} cannot be ruled out`);
    else if (!wholeTool) f.softAsk.push(c.opaque[0] as string);
  }
  // Files written or read by redirections (`> f`, `< f`), wrappers (`time -o F`, `flock F`,
  // `xargs -a F`) and runners (`strace -o F`), each counted for the commands it belongs to.
  // Wherever it sits (a command substitution, a function body, a runner's script), such a file
  // is a write or read of its own: Edit/Write rules decide a write and Read rules (or the
  // workspace) a read, whichever command's Bash rule matched.
  const writes = attributedFiles(c, 'writes').filter((w) => w.target.path === null || !DISCARD.test(w.target.path));
  let uncoveredWrite = false;
  for (const { target: w } of writes) if (!w.network && !ctx.checkWrite(w.path, w.text, f)) uncoveredWrite = true;
  /** Plans that read a file by redirection which a read-only command may not read. */
  const unreadable = new Set<number>();
  let orphanUnreadable = false;
  let unreadableText: string | undefined;
  for (const { target: r, owners } of attributedFiles(c, 'reads')) {
    if (r.network) continue;
    ctx.checkRead(r.path, r.text, f);
    if (r.path !== null && ctx.readable(r.path)) continue;
    unreadableText ??= r.text;
    for (const o of owners) unreadable.add(o);
    if (owners.length === 0) orphanUnreadable = true;
  }
  let allReadOnly = c.opaque.length === 0 && writes.length === 0 && unreadable.size === 0 && !orphanUnreadable;
  let allAllowed = c.opaque.length === 0 && !orphanUnreadable;
  const used: PermissionRule[] = [];
  // A variable set as a statement reaches later commands if exported (or already in the
  // environment, as upper-case names usually are): only harmless ones keep commands read-only.
  const envChanged = c.analyses.some(({ a }) => a.assigns.some((v) => !isHarmlessVariable(v.name) && (v.declared || !/[a-z]/.test(v.name))));
  let outOfTime = false;
  c.plans.forEach(({ plan: p, denyOnly }, i) => {
    if (denyOnly) {
      allReadOnly = false;
      return;
    }
    if (outOfTime || (outOfTime = budget.expired())) return;
    for (const form of p.allowForms) {
      const cwds = form.cwds === undefined ? p.cwds : form.cwds;
      // A command reads relative to its directory (ls, find, grep -r…): that must be readable too
      // (not for cd and friends, which only move, and whose moves are tracked).
      const cwdOk = (cwds !== null && cwds.every((d) => ctx.readable(d))) || DIRECTORY_BUILTINS.has(form.words[0]?.value ?? '');
      const readOnly =
        !envChanged &&
        cwdOk &&
        !unreadable.has(i) &&
        isReadOnlyCommand(form, {
          cwd: cwds?.length === 1 ? (cwds[0] as string) : null,
          home: ctx.home,
          pathOk: (v) => {
            const paths = operandPaths(v, cwds, ctx.home, ctx.readable, ctx.fs, (n) => budget.spendEntries(n));
            if (paths === null) return false;
            let ok = true;
            for (const path of paths) {
              ctx.checkRead(path, v, f);
              if (!ctx.readable(path)) ok = false;
            }
            return ok;
          },
        });
      if (!readOnly) allReadOnly = false;
      const rule = allow.find((r) => bashRuleMatches(r, form));
      if (rule) {
        if (!used.includes(rule)) used.push(rule);
      } else {
        if (!readOnly) allAllowed = false;
      }
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
  f.writesInside = writes.length > 0;
  if (wholeTool) {
    f.allow = { reason: `allowed by ${wholeTool.raw}`, rules: [wholeTool] };
    return;
  }
  // A file read outside the workspace and every Read allow rule asks, whichever rule allowed
  // its command (`grep x < /etc/passwd` with `Bash(grep:*)`).
  if (unreadableText !== undefined) f.softAsk.push(`reads a file outside the workspace and the Read allow rules (${unreadableText})`);
  if (allAllowed) {
    const reason = used.length > 0 ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'read-only commands';
    // A file written that no Edit/Write allow rule covers (`echo $(pwd > f)` with
    // `Bash(echo:*)`, `npm test > log`) asks; acceptEdits allows it inside the workspace.
    f.allow = { reason, rules: used, unruledWrites: uncoveredWrite };
  }
}
