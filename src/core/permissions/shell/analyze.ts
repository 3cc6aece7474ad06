import type { Node, Parser } from 'web-tree-sitter';
import { liveFs, type FsView } from '../fsView';
import { AnalysisBudget, scanBounds } from './bounds';
import { DirTracker, physicalDirs, unionDirs, type DirSnapshot, type Dirs } from './dirs';
import { withTree } from './parser';
import { isDangerousVariable } from './variables';
import { isStdinRedirect, LEAVES, LIST_LIKE, misparsedList, operator, redirectTargets, type FileTarget } from './redirects';
import { evalWord, type ShellWord } from './words';

/** One simple command found anywhere in a script, with what is known statically about it. */
export interface SimpleCommand {
  words: ShellWord[];
  /** Names assigned in front of the command (`FOO=1 cmd`). */
  assignments: string[];
  /** Its working directory when exactly one is possible (physical path); else null (see `cwds`). */
  cwd: string | null;
  /**
   * Every directory it may run in (physical paths): after a `cd` that may fail, both the old and
   * the new one. Null when unknowable (a computed `cd`, `cd -`, CDPATH, a loop that changes
   * directory…): its relative paths cannot be checked.
   */
  cwds: string[] | null;
  /** A literal script fed to its stdin by a here-doc or here-string, when known. */
  stdin?: { text: string; literal: boolean };
  /** Its stdin is the output of another command (`… | cmd`). */
  piped: boolean;
  /** Index (in the analysis's `commands`) of the simple command whose output it reads (`find … | cmd`), if one. */
  pipedFrom?: number;
  text: string;
}

export type { FileTarget } from './redirects';

/** Everything the engine needs from one script. Pure data. */
export interface ShellAnalysis {
  /** False when the parser reported a syntax error: such a script is never allowed. */
  parsed: boolean;
  commands: SimpleCommand[];
  writes: FileTarget[];
  reads: FileTarget[];
  /** Reasons that prevent any allow (dangerous assignment, arithmetic injection...). */
  blockers: string[];
  /** Set when the script was not (fully) analysed: too long, too deep, or out of time. */
  limit?: string;
  /**
   * Variables assigned or exported as statements (`X=1; …`, `export X`), not in front of a
   * command; `declared` when by export/declare/local/readonly/typeset (which can export).
   */
  assigns: { name: string; declared: boolean }[];
}

/** Re-exported for commandPlan.ts. */
export { isDangerousVariable } from './variables';

const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '>&', '&>|']);
const READ_OPS = new Set(['<', '<&']);
/** Case terminators, valid only ending a case item. */
const CASE_TERMINATORS = new Set([';;', ';&', ';;&']);
/** Reserved words that cannot start a command (bash: a syntax error there). */
const MISPLACED_RESERVED = new Set(['then', 'else', 'elif', 'fi', 'do', 'done', 'esac', 'in', '}', ']]']);
/** Statements whose body may run any number of times, or not at all. */
const CONTROL = new Set(['if_statement', 'while_statement', 'for_statement', 'c_style_for_statement', 'case_statement', 'select_statement']);
/** Words that may change the directory (or what cd means); found once per script, by position. */
const CHANGES_DIR = /\b(?:cd|pushd|popd|eval|source|trap|enable|shopt|set)\b|(?:^|[\s;&|(`])\.\s/g;
/** Assignments inside arithmetic: `x=1`, `x+=1`, `x<<=1`, `x++`, `--x`. */
const ARITH_ASSIGN = /([A-Za-z_][A-Za-z0-9_]*)\s*(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Analyses `source` as bash. `cwd` is where it starts; `home` expands `~`. Never throws. Past a
 * bound (see bounds.ts) or the budget's deadline, the result has `limit` set and is not to be
 * trusted for an allow.
 */
export function analyzeShell(parser: Parser, source: string, cwd: string, home: string, budget: AnalysisBudget = new AnalysisBudget(), fs: FsView = liveFs): ShellAnalysis {
  const empty = (limit: string): ShellAnalysis => ({ parsed: true, commands: [], writes: [], reads: [], blockers: [], assigns: [], limit });
  const tooBig = scanBounds(source);
  if (tooBig) return empty(tooBig);
  const outOfTime = 'the command took too long to analyse';
  return withTree(
    parser,
    source,
    (tree) => {
      if (!tree) return empty(outOfTime);
      const out: ShellAnalysis = { parsed: !tree.rootNode.hasError, commands: [], writes: [], reads: [], blockers: [], assigns: [] };
      if (!new Walker(out, source, cwd, home, budget, fs).run(tree.rootNode)) out.limit = outOfTime;
      return out;
    },
    () => budget.expired(),
  );
}

type Task = { node: Node; piped: boolean } | (() => void);
/** Where a node stands in the source, and in which substitution scope. */
type Span = { start: number; end: number; scope: number };

/**
 * Walks the tree in execution order with an explicit stack (no recursion: a deep tree cannot
 * overflow the call stack), tracking the working directory through scopes: subshells, pipeline
 * elements, background jobs and substitutions get a copy that is dropped afterwards.
 */
class Walker {
  private readonly tasks: Task[] = [];
  private readonly cwd: DirTracker;
  private sawArithmetic = false;
  /** Substitution scope the walk is in (0: the script itself); each substitution gets a new one. */
  private scope = 0;
  private scopes = 0;
  /** Where each command of `out.commands` stands (same order), to attribute redirections. */
  private readonly commandSpans: Span[] = [];
  /** Redirection targets with the statement they belong to, attributed at the end of the walk. */
  private readonly owned: { targets: FileTarget[]; owner: Span | null }[] = [];
  private sawCodeInLiteral = false;
  /** The pipeline element about to be visited and the command whose output it reads. */
  private pipeSource: { nodeId: number; from: number } | undefined;
  /** Where CHANGES_DIR matches in the source, ascending. */
  private readonly dirWords: number[];

  constructor(
    private readonly out: ShellAnalysis,
    source: string,
    cwd: string,
    private readonly home: string,
    private readonly budget: AnalysisBudget,
    fs: FsView,
  ) {
    this.cwd = new DirTracker(cwd, home, fs);
    this.dirWords = Array.from(source.matchAll(CHANGES_DIR), (m) => m.index);
  }

  /** True when `node`'s text holds a word that may change the directory. O(log n). */
  private mentionsDirChange(node: Node): boolean {
    const words = this.dirWords;
    let lo = 0;
    let hi = words.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((words[mid] as number) < node.startIndex) lo = mid + 1;
      else hi = mid;
    }
    return lo < words.length && (words[lo] as number) < node.endIndex;
  }

  /** False when the budget ran out before the end. */
  run(root: Node): boolean {
    this.tasks.push({ node: root, piped: false });
    let n = 0;
    while (this.tasks.length > 0) {
      if ((++n & 31) === 0 && this.budget.expired()) return false;
      const t = this.tasks.pop() as Task;
      if (typeof t === 'function') t();
      else this.visit(t.node, t.piped);
    }
    if (this.sawArithmetic && this.sawCodeInLiteral) this.out.blockers.push('arithmetic evaluation of a value that holds a command substitution can run it');
    this.attribute();
    return true;
  }

  /** Fills each redirection target's `commands`: the commands of its statement, in its scope. */
  private attribute(): void {
    const order = this.commandSpans.map((_, i) => i).sort((a, b) => (this.commandSpans[a] as Span).start - (this.commandSpans[b] as Span).start);
    const starts = order.map((i) => (this.commandSpans[i] as Span).start);
    for (const { targets, owner } of this.owned) {
      const commands: number[] = [];
      if (owner) {
        let lo = 0;
        let hi = starts.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if ((starts[mid] as number) < owner.start) lo = mid + 1;
          else hi = mid;
        }
        for (let k = lo; k < order.length && (starts[k] as number) < owner.end; k++) {
          const i = order[k] as number;
          const c = this.commandSpans[i] as Span;
          if (c.end <= owner.end && c.scope === owner.scope) commands.push(i);
        }
      }
      for (const t of targets) t.commands = commands;
    }
  }

  private then(fn: () => void): void {
    this.tasks.push(fn);
  }

  private node(node: Node | null | undefined, piped: boolean): void {
    if (node) this.tasks.push({ node, piped });
  }

  /** Visits `node`'s children in order; a statement followed by `&` runs in its own scope. */
  private children(node: Node, piped: boolean): void {
    const cs = node.children;
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i];
      if (!c) continue;
      // tree-sitter-bash accepts a case terminator anywhere (`ls ;; pwd`); bash refuses it.
      if (!c.isNamed && CASE_TERMINATORS.has(c.type) && node.type !== 'case_item') this.out.parsed = false;
      if (LEAVES.has(c.type)) continue;
      const next = cs[i + 1];
      if (next && !next.isNamed && next.type === '&') this.scoped(c, piped);
      else this.node(c, piped);
    }
  }

  /** Visits `node` with a copy of the directory state, restored afterwards. */
  private scoped(node: Node, piped: boolean, enter?: () => void): void {
    let saved: DirSnapshot | undefined;
    this.then(() => this.cwd.restore(saved as DirSnapshot));
    this.node(node, piped);
    this.then(() => {
      saved = this.cwd.snapshot();
      enter?.();
    });
  }

  private visit(node: Node, piped: boolean): void {
    switch (node.type) {
      case 'command':
        return this.command(node, piped, undefined, piped);
      case 'redirected_statement':
        return this.redirected(node, piped);
      case 'file_redirect':
        return this.fileRedirect(node, piped);
      case 'variable_assignment': {
        // `X=1 cmd` sets X for cmd only (its plan sees it); anywhere else it is a statement whose
        // value later commands may see (see `assigns`).
        const parent = node.parent?.type;
        this.assignment(node.childForFieldName('name')?.text ?? '', 'sets', parent === 'command' ? 'prefix' : parent === 'declaration_command' ? 'declared' : 'statement');
        break;
      }
      case 'declaration_command':
        this.declaration(node);
        break;
      case 'subshell':
      case 'command_substitution':
      case 'process_substitution': {
        let saved: DirSnapshot | undefined;
        const outer = this.scope;
        const substitution = node.type !== 'subshell';
        this.then(() => {
          this.cwd.restore(saved as DirSnapshot);
          this.scope = outer;
        });
        this.children(node, piped);
        this.then(() => {
          saved = this.cwd.snapshot();
          if (substitution) this.scope = ++this.scopes;
        });
        return;
      }
      case 'pipeline':
        return this.pipeline(node, piped);
      case 'list':
        return this.list(node, piped);
      case 'negated_command':
        this.then(() => (this.cwd.lastSuccess = undefined));
        break;
      case 'function_definition':
        return this.functionDefinition(node, piped);
      case 'arithmetic_expansion':
      case 'subscript':
      case 'test_command':
        this.arithmetic(node);
        break;
      case 'compound_statement':
        if (node.text.startsWith('((')) this.arithmetic(node);
        break;
      case 'raw_string':
      case 'ansi_c_string': {
        const v = evalWord(node).value;
        if (v.includes('$(') || v.includes('`')) this.sawCodeInLiteral = true;
        break;
      }
      case 'expansion':
        this.expansion(node);
        break;
      default:
        break;
    }
    if (CONTROL.has(node.type)) {
      if (node.type === 'c_style_for_statement') this.arithmetic(node);
      if (node.type === 'for_statement' || node.type === 'select_statement') this.assignment(node.childForFieldName('variable')?.text ?? '', 'loops over');
      // A body that runs zero or more times: a directory change inside makes the directory unknown.
      if (this.mentionsDirChange(node)) this.cwd.unknown();
      this.then(() => (this.cwd.lastSuccess = undefined));
    }
    this.children(node, piped);
  }

  private pipeline(node: Node, piped: boolean): void {
    const elements = node.namedChildren.filter((c): c is Node => !!c);
    // tree-sitter-bash reads `a && b 2>&1 | c` as `(a && b 2>&1) | c`; bash runs `a && (b 2>&1 | c)`,
    // so `a` runs in this shell. For such a misparse, let changes flow through and keep both states.
    if (elements.some(misparsedList)) {
      let before: Dirs = null;
      this.then(() => {
        this.cwd.dirs = unionDirs(before, this.cwd.dirs);
        this.cwd.lastSuccess = undefined;
      });
      for (let i = elements.length - 1; i >= 0; i--) this.node(elements[i], i === 0 ? piped : true);
      this.then(() => (before = this.cwd.dirs));
      return;
    }
    this.then(() => (this.cwd.lastSuccess = undefined));
    // Every element runs in its own subshell; all but the first read the previous one's output.
    for (let i = elements.length - 1; i >= 0; i--) {
      const el = elements[i] as Node;
      this.scoped(el, i === 0 ? piped : true);
      // A simple command reading a simple command's output: remember which (find … | xargs …).
      if (i > 0 && el.type === 'command' && elements[i - 1]?.type === 'command') {
        this.then(() => (this.pipeSource = { nodeId: el.id, from: this.out.commands.length - 1 }));
      }
    }
  }

  /** `a && b`, `a || b`: b runs after a, only on a's success (failure); afterwards either may have happened. */
  private list(node: Node, piped: boolean): void {
    const [left, opNode, right] = node.children;
    const op = opNode?.type;
    let afterLeft: Dirs = null;
    this.then(() => {
      this.cwd.dirs = unionDirs(afterLeft, this.cwd.dirs);
      // The list succeeded when its right side did (for &&); for || nothing is known.
      if (op !== '&&') this.cwd.lastSuccess = undefined;
    });
    this.node(right, piped);
    this.then(() => {
      afterLeft = this.cwd.dirs;
      if (op === '&&' && this.cwd.lastSuccess !== undefined) this.cwd.dirs = this.cwd.lastSuccess;
      this.cwd.lastSuccess = undefined;
    });
    this.node(left, piped);
  }

  /** A function body runs whenever it is called, from any directory. */
  private functionDefinition(node: Node, piped: boolean): void {
    const name = node.childForFieldName('name')?.text ?? '';
    const changes = this.mentionsDirChange(node) || /^(cd|pushd|popd|builtin|command|dirs|set)$/.test(name);
    this.then(() => {
      if (changes) this.cwd.unknown();
    });
    let saved: DirSnapshot | undefined;
    this.then(() => this.cwd.restore(saved as DirSnapshot));
    this.children(node, piped);
    this.then(() => {
      saved = this.cwd.snapshot();
      this.cwd.unknown();
    });
  }

  /** `prefix`: only the command it prefixes sees the value; otherwise later commands may. */
  private assignment(name: string, verb: string, scope: 'prefix' | 'statement' | 'declared' = 'statement'): void {
    if (scope !== 'prefix') this.out.assigns.push({ name, declared: scope === 'declared' });
    if (name === 'CDPATH') this.cwd.cdpathAssigned = true;
    if (isDangerousVariable(name)) this.out.blockers.push(`${verb} ${name}, which changes what commands run`);
  }

  private declaration(node: Node): void {
    for (const c of node.namedChildren) {
      if (c && (c.type === 'word' || c.type === 'string' || c.type === 'raw_string' || c.type === 'concatenation')) {
        const w = evalWord(c);
        const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)/.exec(w.value);
        if (m?.[1] === 'CDPATH') this.cwd.cdpathAssigned = true;
        if (m?.[2] && m[1] && isDangerousVariable(m[1])) this.out.blockers.push(`sets ${m[1]}, which changes what later commands run`);
        if (m?.[1] && !w.value.startsWith('-')) this.out.assigns.push({ name: m[1], declared: true });
      }
    }
  }

  /** `${x@P}`; `${X:=v}` / `${X=v}` assign X. */
  private expansion(node: Node): void {
    if (/@P\}$/.test(node.text)) this.out.blockers.push('a prompt expansion (@P) runs command substitutions held in the variable');
    let assigns = false;
    let name = '';
    for (const c of node.children) {
      if (!c) continue;
      if (c.type === 'variable_name' && !name) name = c.text;
      else if (!c.isNamed && (c.type === '=' || c.type === ':=')) assigns = true;
    }
    if (assigns) this.assignment(name, 'assigns');
  }

  private arithmetic(node: Node): void {
    this.sawArithmetic = true;
    for (const m of node.text.matchAll(ARITH_ASSIGN)) this.assignment(m[1] ?? m[2] ?? '', 'assigns');
  }

  private redirected(node: Node, piped: boolean): void {
    const body = node.childForFieldName('body');
    let stdin: SimpleCommand['stdin'];
    let provides = false;
    const children = node.children;
    for (const c of children) {
      if (!c?.isNamed || c.id === body?.id) continue;
      if (c.type === 'heredoc_redirect') {
        provides = true;
        const bodyNode = c.namedChildren.find((x) => x?.type === 'heredoc_body');
        const start = c.namedChildren.find((x) => x?.type === 'heredoc_start');
        const quoted = !!start && /['"\\]/.test(start.text);
        const hasExpansion = !!bodyNode && bodyNode.namedChildren.some((x) => x && x.type !== 'heredoc_content');
        const text = bodyNode ? bodyNode.text : '';
        stdin = { text: quoted ? text : text.replace(/\\([$`\\\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch)), literal: quoted || !hasExpansion };
      } else if (c.type === 'file_redirect' && isStdinRedirect(c)) {
        provides = true;
        stdin = { text: '', literal: false };
      } else if (c.type === 'herestring_redirect') {
        provides = true;
        const arg = c.namedChildren.find((x) => x && x.type !== 'file_descriptor');
        if (arg) {
          const w = evalWord(arg);
          stdin = { text: w.value, literal: !w.dynamic };
        }
      }
    }
    const redirects = (): void => {
      for (let i = children.length - 1; i >= 0; i--) {
        const c = children[i];
        if (c && c.id !== body?.id) this.node(c, piped);
      }
    };
    if (body && LIST_LIKE.has(body.type)) {
      // tree-sitter-bash hangs `a && b > y` and `a | b > y` on the whole list; bash opens `y` for
      // `b`, after `a` ran. Resolve the redirections after the body, in every directory it may
      // leave (a superset of where `b` starts).
      redirects();
      this.node(body, piped || provides);
      return;
    }
    // Otherwise the redirections are opened before the body runs (in the directory before it).
    if (body?.type === 'command') this.then(() => this.command(body, piped, stdin, piped || provides));
    else this.node(body, piped || provides);
    redirects();
  }

  /** Queues a simple command: its substitutions and redirections first, then the command itself. */
  private command(node: Node, piped: boolean, stdin: SimpleCommand['stdin'], childPiped: boolean): void {
    const words: ShellWord[] = [];
    const assignments: string[] = [];
    let ownStdin = stdin;
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (c.type === 'variable_assignment') assignments.push(c.childForFieldName('name')?.text ?? '');
      else if (c.type === 'command_name') {
        const inner = c.namedChild(0);
        words.push(inner ? evalWord(inner, this.home) : { value: c.text, dynamic: false, glob: false, text: c.text, fields: [c.text] });
      } else if (c.type === 'herestring_redirect') {
        const arg = c.namedChildren.find((x) => x && x.type !== 'file_descriptor');
        if (arg) {
          const w = evalWord(arg);
          ownStdin = { text: w.value, literal: !w.dynamic };
        }
      } else if (c.type.endsWith('redirect')) continue;
      else if (words.length > 0) words.push(evalWord(c, this.home));
    }
    // A reserved word where a command stands (`fi`, `then ls`, a stray `}`) or a bare `coproc`
    // is a syntax error to bash; tree-sitter-bash reads it as a command name.
    const name = words[0];
    if (name && !name.dynamic && name.text === name.value && (MISPLACED_RESERVED.has(name.value) || (name.value === 'coproc' && words.length === 1))) this.out.parsed = false;
    this.then(() => {
      if (words.length === 0) {
        this.cwd.lastSuccess = undefined;
        return;
      }
      const cwds = physicalDirs(this.cwd.dirs);
      const cmd: SimpleCommand = { words, assignments, cwd: cwds?.length === 1 ? (cwds[0] as string) : null, cwds, piped, text: node.text };
      if (this.pipeSource?.nodeId === node.id) {
        cmd.pipedFrom = this.pipeSource.from;
        this.pipeSource = undefined;
      }
      if (ownStdin) cmd.stdin = ownStdin;
      this.out.commands.push(cmd);
      this.commandSpans.push({ start: node.startIndex, end: node.endIndex, scope: this.scope });
      if (words.some((w) => !w.dynamic && /(^|[^A-Za-z0-9_])CDPATH([^A-Za-z0-9_]|$)/.test(w.value))) this.cwd.cdpathAssigned = true;
      this.cwd.command(words);
    });
    this.children(node, childPiped);
  }

  /** The statement a redirection belongs to: the command it is written in, or the statement it follows. */
  private ownerOf(redirect: Node): Span | null {
    const parent = redirect.parent;
    const owner = parent?.type === 'redirected_statement' ? parent.childForFieldName('body') : parent?.type === 'command' ? parent : null;
    return owner ? { start: owner.startIndex, end: owner.endIndex, scope: this.scope } : null;
  }

  private fileRedirect(node: Node, piped: boolean): void {
    this.children(node, piped);
    const op = operator(node);
    const dest = node.childForFieldName('destination');
    if (!dest || dest.type === 'process_substitution') return; // a pipe to a command that is analysed itself
    const w = evalWord(dest, this.home);
    if ((op === '>&' || op === '<&') && (dest.type === 'number' || w.value === '-')) return;
    const targets = redirectTargets(w, node.text, physicalDirs(this.cwd.dirs));
    this.owned.push({ targets, owner: this.ownerOf(node) });
    const isRead = READ_OPS.has(op) || op === '<>';
    const isWrite = WRITE_OPS.has(op) || !READ_OPS.has(op); // an unknown operator counts as a write
    for (const t of targets) {
      if (isRead) this.out.reads.push(t);
      if (isWrite) this.out.writes.push(t);
    }
  }

}
