import { isAbsolute, resolve } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import { withTree } from './parser';
import { evalWord, type ShellWord } from './words';

/** One simple command found anywhere in a script, with what is known statically about it. */
export interface SimpleCommand {
  words: ShellWord[];
  /** Names assigned in front of the command (`FOO=1 cmd`). */
  assignments: string[];
  /** Working directory it runs in; null when a `cd` made it unknowable. */
  cwd: string | null;
  /** A literal script fed to its stdin by a here-doc or here-string, when known. */
  stdin?: { text: string; literal: boolean };
  /** Its stdin is the output of another command (`… | cmd`). */
  piped: boolean;
  text: string;
}

/** A file a redirection touches. `path` is null when computed at run time. */
export interface FileTarget {
  path: string | null;
  text: string;
}

/** Everything the engine needs from one script. Pure data. */
export interface ShellAnalysis {
  /** False when the parser reported a syntax error: such a script is never allowed. */
  parsed: boolean;
  commands: SimpleCommand[];
  writes: FileTarget[];
  reads: FileTarget[];
  /** Reasons that prevent any allow (dangerous assignment, arithmetic injection...). */
  blockers: string[];
  /**
   * Variables assigned or exported as statements (`X=1; …`, `export X`), not in front of a
   * command; `declared` when by export/declare/local/readonly/typeset (which can export).
   */
  assigns: { name: string; declared: boolean }[];
}

/** Variables whose value changes what a later command runs or loads. */
const DANGEROUS_EXACT = new Set([
  'PATH', 'IFS', 'BASH_ENV', 'ENV', 'NODE_OPTIONS', 'NODE_PATH', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'CDPATH', 'GLOBIGNORE',
  'PAGER', 'MANPAGER', 'GIT_PAGER', 'EDITOR', 'VISUAL', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'HOME', 'ZDOTDIR', 'SSH_ASKPASS', 'SUDO_ASKPASS',
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'RUSTC_WRAPPER', 'CARGO_BUILD_RUSTC_WRAPPER', 'MAKEFLAGS', 'TERMINFO', 'HISTFILE', 'BASH_XTRACEFD', 'XDG_CONFIG_HOME',
]);
const DANGEROUS_PREFIX = ['LD_', 'DYLD_', 'GIT_', 'NPM_CONFIG_', 'YARN_', 'PYTHON', 'PERL', 'RUBY', 'BASH_FUNC_', 'GCONV_', 'DOTNET_', 'COMPOSER_', 'BUN_', 'DENO_'];

/** True for a variable whose assignment can change what runs. */
export function isDangerousVariable(name: string): boolean {
  const up = name.toUpperCase();
  return DANGEROUS_EXACT.has(up) || DANGEROUS_PREFIX.some((p) => up.startsWith(p));
}

const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '>&', '&>|']);
const READ_OPS = new Set(['<', '<&']);

/**
 * Analyses `source` as bash. `cwd` is where it starts; `home` expands `~`. Never throws.
 */
export function analyzeShell(parser: Parser, source: string, cwd: string, home: string): ShellAnalysis {
  return withTree(parser, source, (tree) => {
    const out: ShellAnalysis = { parsed: tree !== null && !tree.rootNode.hasError, commands: [], writes: [], reads: [], blockers: [], assigns: [] };
    if (!tree) return out;
    new Walker(out, cwd, home).visit(tree.rootNode);
    return out;
  });
}

class Walker {
  private cwd: string | null;
  private sawArithmetic = false;
  private sawCodeInLiteral = false;

  constructor(
    private readonly out: ShellAnalysis,
    cwd: string,
    private readonly home: string,
  ) {
    this.cwd = cwd;
  }

  visit(node: Node): void {
    this.walk(node);
    if (this.sawArithmetic && this.sawCodeInLiteral) this.out.blockers.push('arithmetic evaluation of a value that holds a command substitution can run it');
  }

  private walk(node: Node): void {
    switch (node.type) {
      case 'command':
        this.command(node, undefined);
        return;
      case 'redirected_statement':
        this.redirected(node);
        return;
      case 'variable_assignment':
        this.assignment(node);
        break;
      case 'declaration_command':
        for (const c of node.namedChildren) {
          if (c && (c.type === 'word' || c.type === 'string' || c.type === 'raw_string' || c.type === 'concatenation')) {
            const w = evalWord(c);
            const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)/.exec(w.value);
            if (m?.[2] && m[1] && isDangerousVariable(m[1])) this.out.blockers.push(`sets ${m[1]}, which changes what later commands run`);
            if (m?.[1] && !w.value.startsWith('-')) this.out.assigns.push({ name: m[1], declared: true });
          }
        }
        break;
      case 'file_redirect':
        this.fileRedirect(node);
        return;
      case 'arithmetic_expansion':
      case 'c_style_for_statement':
      case 'test_command':
      case 'subscript':
        this.sawArithmetic = true;
        break;
      case 'raw_string':
      case 'ansi_c_string': {
        const v = evalWord(node).value;
        if (v.includes('$(') || v.includes('`')) this.sawCodeInLiteral = true;
        break;
      }
      case 'expansion':
        if (/@P\}$/.test(node.text)) this.out.blockers.push('a prompt expansion (@P) runs command substitutions held in the variable');
        break;
      case 'compound_statement':
        if (node.text.startsWith('((')) this.sawArithmetic = true;
        break;
      default:
        break;
    }
    for (const c of node.children) if (c) this.walk(c);
  }

  private assignment(node: Node): void {
    const name = node.childForFieldName('name')?.text ?? '';
    if (isDangerousVariable(name)) this.out.blockers.push(`sets ${name}, which changes what commands run`);
    const parent = node.parent?.type;
    if (parent !== 'command') this.out.assigns.push({ name, declared: parent === 'declaration_command' });
  }

  private redirected(node: Node): void {
    const body = node.childForFieldName('body');
    let stdin: SimpleCommand['stdin'];
    for (const c of node.namedChildren) {
      if (!c || c === body || c.id === body?.id) continue;
      if (c.type === 'heredoc_redirect') {
        const bodyNode = c.namedChildren.find((x) => x?.type === 'heredoc_body');
        const start = c.namedChildren.find((x) => x?.type === 'heredoc_start');
        const quoted = !!start && /['"\\]/.test(start.text);
        const hasExpansion = !!bodyNode && bodyNode.namedChildren.some((x) => x && x.type !== 'heredoc_content');
        const text = bodyNode ? bodyNode.text : '';
        stdin = { text: quoted ? text : text.replace(/\\([$`\\\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch)), literal: quoted || !hasExpansion };
      } else if (c.type === 'file_redirect' && /^\d*<$/.test(c.children.filter((x) => x && !x.isNamed).map((x) => x?.type).join(''))) {
        stdin = { text: '', literal: false };
      } else if (c.type === 'herestring_redirect') {
        const arg = c.namedChildren.find((x) => x && x.type !== 'file_descriptor');
        if (arg) {
          const w = evalWord(arg);
          stdin = { text: w.value, literal: !w.dynamic };
        }
      }
    }
    if (body?.type === 'command') this.command(body, stdin);
    else if (body) this.walk(body);
    for (const c of node.namedChildren) if (c && c.id !== body?.id) this.walk(c);
  }

  private command(node: Node, stdin: SimpleCommand['stdin']): void {
    const words: ShellWord[] = [];
    const assignments: string[] = [];
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (c.type === 'variable_assignment') assignments.push(c.childForFieldName('name')?.text ?? '');
      else if (c.type === 'command_name') {
        const inner = c.namedChildren[0];
        words.push(inner ? evalWord(inner) : { value: c.text, dynamic: false, glob: false, text: c.text });
      } else if (c.type === 'herestring_redirect') {
        const arg = c.namedChildren.find((x) => x && x.type !== 'file_descriptor');
        if (arg) {
          const w = evalWord(arg);
          stdin = { text: w.value, literal: !w.dynamic };
        }
      } else if (c.type.endsWith('redirect')) continue;
      else if (words.length > 0) words.push(evalWord(c));
    }
    if (words.length > 0) {
      const piped = stdinFromElsewhere(node);
      const cmd: SimpleCommand = { words, assignments, cwd: this.cwd, piped, text: node.text };
      if (stdin) cmd.stdin = stdin;
      this.out.commands.push(cmd);
      this.trackCwd(words);
    }
    for (const c of node.children) if (c) this.walk(c);
  }

  private trackCwd(words: ShellWord[]): void {
    const name = words[0]?.value;
    if (name !== 'cd' && name !== 'pushd' && name !== 'popd') return;
    const args = words.slice(1).filter((w) => !(w.value.startsWith('-') && w.value.length > 1 && !w.dynamic));
    const target = args[0];
    if (name === 'popd' || (target && (target.dynamic || target.glob || target.value === '-'))) {
      this.cwd = null;
      return;
    }
    const dest = target ? this.resolvePath(target.value) : this.home;
    this.cwd = dest;
  }

  /** Absolute path of a static word in the current directory; null when unknowable. */
  resolvePath(value: string): string | null {
    let v = value;
    if (v === '~' || v.startsWith('~/')) v = this.home + v.slice(1);
    else if (v.startsWith('~')) return null;
    if (isAbsolute(v)) return resolve(v);
    return this.cwd === null ? null : resolve(this.cwd, v);
  }

  private fileRedirect(node: Node): void {
    let op = '';
    for (const c of node.children) if (c && !c.isNamed) op += c.type;
    const dest = node.childForFieldName('destination');
    for (const c of node.children) if (c && c.isNamed) this.walk(c);
    if (!dest) return;
    const w = evalWord(dest);
    if ((op === '>&' || op === '<&') && (dest.type === 'number' || w.value === '-')) return;
    const target: FileTarget = { path: w.dynamic || w.glob ? null : this.resolvePath(w.value), text: node.text };
    if (WRITE_OPS.has(op)) this.out.writes.push(target);
    else if (READ_OPS.has(op)) this.out.reads.push(target);
    else this.out.writes.push(target); // unknown operator: treat as a write
  }
}

/**
 * True when an enclosing pipeline or redirection (other than the command's own) feeds the
 * command's stdin: `curl … | sh`, `curl … | (sh)`, `{ sh; } < file`.
 */
function stdinFromElsewhere(node: Node): boolean {
  let child: Node = node;
  for (let a = node.parent; a; child = a, a = a.parent) {
    if (a.type === 'pipeline' && a.namedChildren[0]?.id !== child.id) return true;
    if (a.type === 'redirected_statement' && a.childForFieldName('body')?.id !== node.id) {
      for (const r of a.namedChildren) {
        if (!r || r.id === child.id) continue;
        if (r.type === 'heredoc_redirect' || r.type === 'herestring_redirect') return true;
        if (r.type === 'file_redirect' && /^\d*<$/.test(r.children.filter((x) => x && !x.isNamed).map((x) => x?.type).join(''))) return true;
      }
    }
    if (a.type === 'program') break;
  }
  return false;
}
