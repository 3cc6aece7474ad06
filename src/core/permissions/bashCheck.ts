import type { Parser } from 'web-tree-sitter';
import { applyUse, decideWrites, pathsOf, type Locating, type PendingWrite } from './bashFiles';
import type { FsView } from './fsView';
import type { PathPolicy } from './pathPolicy';
import { examineCommand, isHarmlessVariable, isReadOnlyProgram, type FileUse } from './readOnlyCommands';
import type { Findings, RuleSet } from './findings';
import { compileBashPattern, type BashPattern, type PermissionRule } from './rules';
import { analyzeShell, type ShellAnalysis } from './shell/analyze';
import { AnalysisBudget } from './shell/bounds';
import { planCommand, type CommandForm, type CommandPlan, type InlineScript } from './shell/commandPlan';
import type { FileTarget } from './shell/redirects';
import { checkOperatorRules } from './pipelineRules';
import { findRoots } from './readOnly/find';
import { belowWord } from './shell/words';

/** What the Bash check needs from the engine. */
export interface BashContext {
  parser: Parser;
  rules: RuleSet;
  home: string;
  /** The file system as this decision sees it (answers shared across the decision). */
  fs: FsView;
  /** The path checks of this decision: every file the call opens goes through it. */
  policy: PathPolicy;
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
    const lastAt = p.words.length - 1;
    return p.words.every((pw, i) => {
      const w = words[i];
      if (!w || w.dynamic || w.glob) return false;
      return w.value === pw || (p.joined === true && i === lastAt && w.value.startsWith(pw));
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
    // `find ROOT … | xargs cmd`: what xargs appends are files below ROOT.
    const source = cmd.pipedFrom === undefined ? undefined : a.commands[cmd.pipedFrom];
    const head = source?.words[0];
    if (source && head && !head.dynamic && head.value === 'find') plan.argsBelow = findRoots(source.words, true) ?? undefined;
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

/**
 * A form whose run-time arguments come from `find ROOT…` (xargs): its input arguments (`-I {}`)
 * and the arguments appended are the files below the roots. Otherwise the form as it is.
 */
function withFindArguments(form: CommandForm, roots: string[] | undefined): CommandForm {
  if (!roots || !(form.openEnded || form.words.some((w) => w.fromInput))) return form;
  const below = roots.map(belowWord);
  const words = form.words.flatMap((w) => (w.fromInput ? below : [w]));
  return { ...form, words: form.openEnded && !form.words.some((w) => w.fromInput) ? [...words, ...below] : words, openEnded: false };
}

/** Commands that change the shell's directory (tracked by the analysis) and read nothing. */
const DIRECTORY_BUILTINS = new Set(['cd', 'pushd', 'popd', 'dirs']);

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
  const policy = ctx.policy;
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
    f.hardAsk.push(...p.hardAsks);
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
  checkOperatorRules(c.plans.map((x) => x.plan), deny, ask, f, bashRuleMatches);
  const wholeTool = allow.find((r) => r.specifier === undefined);
  // Files read by redirections (`< f`), wrappers (`xargs -a F`) and runners, each counted for the
  // commands it belongs to: Read rules decide them, whichever command's Bash rule matched.
  /** Plans that read a file by redirection which a read-only command may not read. */
  const unreadable = new Set<number>();
  let orphanUnreadable = false;
  let unreadableText: string | undefined;
  for (const { target: r, owners } of attributedFiles(c, 'reads')) {
    if (r.network) continue;
    const ok = r.path !== null && policy.read(r.path, f);
    if (ok) continue;
    unreadableText ??= r.text;
    for (const o of owners) unreadable.add(o);
    if (owners.length === 0) orphanUnreadable = true;
  }
  // Files written by redirections (`> f`), wrappers (`time -o F`, `flock F`) and runners
  // (`strace -o F`): a write of its own, never covered by the command's Bash rule.
  const writes: PendingWrite[] = [];
  for (const { target: w } of attributedFiles(c, 'writes')) if (!w.network) writes.push({ path: w.path, text: w.text, kind: 'write', covered: false });
  let allReadOnly = writes.length === 0 && unreadable.size === 0 && !orphanUnreadable;
  let allAllowed = !orphanUnreadable;
  const used: PermissionRule[] = [];
  // A variable set as a statement reaches later commands if exported (or already in the
  // environment, as upper-case names usually are): only harmless ones keep commands read-only.
  const envChanged = c.analyses.some(({ a }) => a.assigns.some((v) => !isHarmlessVariable(v.name) && (v.declared || !/[a-z]/.test(v.name))));
  let outOfTime = false;
  /** Why a command a rule allowed cannot be vouched for (its files are not all known, or it reads outside). */
  const unvouched: string[] = [];
  c.plans.forEach(({ plan: p, denyOnly }, i) => {
    if (outOfTime || (outOfTime = budget.expired())) return;
    // A runner's command and a runner's scripts: their files are checked, their form needs no rule.
    const fileOnly = denyOnly ? p.allowForms : [];
    for (const form of [...fileOnly, ...p.fileForms]) examine(form, p.cwds, true);
    if (denyOnly) {
      allReadOnly = false;
      return;
    }
    for (const form of p.allowForms) {
      const r = examine(form, p.cwds, false);
      if (!r.readOnly) allReadOnly = false;
      if (r.rule) {
        if (!used.includes(r.rule)) used.push(r.rule);
      } else if (!r.readOnly) allAllowed = false;
    }

    /** One form's files and verdict: read-only (no rule needed), or the allow rule matching it. */
    function examine(given: CommandForm, planCwds: readonly string[] | null, filesOnly: boolean): { readOnly: boolean; rule?: PermissionRule } {
      const form = withFindArguments(given, p.argsBelow);
      const cwds = form.cwds === undefined ? planCwds : form.cwds;
      const where: Locating = { cwds, home: ctx.home, spend: (n) => budget.spendEntries(n) };
      const formWrites: (Omit<PendingWrite, 'covered'> & { byRule: boolean })[] = [];
      let unknownFile = false;
      let readsOutside = false;
      const use = (u: FileUse): boolean => {
        const ok = applyUse(u, where, policy, f, formWrites, () => (unknownFile = true));
        if (!ok && u.kind !== 'write' && u.kind !== 'writeTree' && u.kind !== 'writeBelow' && !unknownFile) readsOutside = true;
        return ok;
      };
      const v = examineCommand(form, {
        cwd: cwds?.length === 1 ? (cwds[0] as string) : null,
        home: ctx.home,
        use,
        exists: (value) => (pathsOf(value, where, policy) ?? []).some((p) => {
          const r = policy.resolve(p);
          return r.ok && r.exists;
        }),
      });
      if (v?.opaque) c.opaque.push(v.opaque);
      // Files a planner found for this form (git's options).
      let extraUnknown: string | undefined;
      for (const extra of p.extras) {
        if (extra.form !== given) continue;
        for (const u of extra.uses) use(u);
        extraUnknown ??= extra.unknown;
      }
      const rule = filesOnly ? undefined : allow.find((r) => bashRuleMatches(r, form));
      for (const { byRule, ...w } of formWrites) writes.push({ ...w, covered: byRule && (filesOnly ? denyOnlyCovered(i) : rule !== undefined) });
      if (filesOnly) return { readOnly: false };
      // A command reads relative to its directory (ls, find, grep -r…): that must be readable too
      // (not for cd and friends, which only move, and whose moves are tracked).
      const cwdOk = (cwds !== null && cwds.every((d) => policy.readable(d))) || DIRECTORY_BUILTINS.has(form.words[0]?.value ?? '');
      const readOnly = !!v?.readOnly && !envChanged && cwdOk && !unreadable.has(i) && formWrites.length === 0;
      if (rule && ((v && !v.complete) || extraUnknown || unknownFile)) {
        const why = extraUnknown ?? 'a file is named only at run time or an option is unknown';
        unvouched.push(`cannot tell which files ${form.words[0]?.text ?? 'it'} reads and writes (${why}), so ${rule.raw} cannot vouch for them`);
      }
      if (rule && readsOutside) unvouched.push(`${form.words[0]?.text ?? 'the command'} reads a file outside the workspace and the Read allow rules`);
      return rule ? { readOnly, rule } : { readOnly };
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
  if (c.opaque.length > 0) {
    allReadOnly = false;
    allAllowed = false;
    const specificDeny = deny.find((r) => r.specifier !== undefined);
    if (specificDeny) f.hardAsk.push(`${c.opaque[0]}, so ${specificDeny.raw} cannot be ruled out`);
    else if (!wholeTool) f.softAsk.push(c.opaque[0] as string);
  }
  // Every write, decided once (rules, protected places, the boundary).
  const uncoveredWrite = decideWrites(writes, policy, f);
  if (writes.length > 0) allReadOnly = false;
  f.readOnly = allReadOnly;
  f.writesInside = writes.length > 0;
  if (wholeTool) {
    f.allow = { reason: `allowed by ${wholeTool.raw}`, rules: [wholeTool] };
    return;
  }
  // A file read outside the workspace and every Read allow rule asks, whichever rule allowed
  // its command (`grep x < /etc/passwd` with `Bash(grep:*)`); so do files Keel cannot name.
  if (unreadableText !== undefined) f.softAsk.push(`reads a file outside the workspace and the Read allow rules (${unreadableText})`);
  f.softAsk.push(...unvouched);
  if (allAllowed) {
    const reason = used.length > 0 ? `allowed by ${used.map((r) => r.raw).join(', ')}` : 'read-only commands';
    // A file written that no Edit/Write allow rule covers (`echo $(pwd > f)` with
    // `Bash(echo:*)`, `npm test > log`) asks; acceptEdits allows it inside the workspace.
    f.allow = { reason, rules: used, unruledWrites: uncoveredWrite };
  }

  /** Whether the plan that owns deny-only plan `i` (a runner's command) was allowed by a rule. */
  function denyOnlyCovered(i: number): boolean {
    const owner = c.plans[c.plans[i]?.owner ?? i]?.plan;
    return !!owner && owner.allowForms.some((form) => allow.some((r) => bashRuleMatches(r, form)));
  }
}
