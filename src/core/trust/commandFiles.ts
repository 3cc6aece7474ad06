import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { digestOf, fileDigest } from './digest';
import { parseCommandLine, type SimpleCommand, type Word } from './commandWords';
import { localImports, scriptKind, scriptText, shellSources } from './scriptImports';
import { ARG_OPTIONS, CODE_OPTIONS, FILE_OPTIONS, JS_RUNTIMES, KEYWORDS, NO_EXEC, NOT_COMMANDS, optionValue, SHELLS, skipOptions, skipWrapperOptions, SYSTEM_PREFIXES } from './commandTables';

/**
 * Which files a hook's or an MCP server's command runs (docs/permissions.md, "Trust"), so that an
 * approval covers their content and not only the command's text: `bash scripts/format.sh`,
 * `node tools/server.mjs` (and the local modules it imports), `npx x` (the workspace's
 * `node_modules/.bin/x`), `npm run y` (the script's text in package.json, then what that runs),
 * `make` (the Makefile), a shell script's own commands and `source`s. Every literal word naming an
 * existing file is included too. A command whose *program or script* is computed at run time
 * (`bash "$X"`, `eval …`, `node $(…)`) cannot be resolved: `unresolved` says why, and such a
 * command is never approved. Never throws.
 */
export interface RunFile {
  /** Absolute path as named (for a package.json script: the package.json). */
  path: string;
  /** As the person sees it: relative to the workspace where it is inside. */
  display: string;
  /** Content digest now (`absent` when it does not exist yet: creating it is a change). */
  digest: string;
  /** True when the file is inside the workspace (a model's write to it must ask). */
  inWorkspace: boolean;
  /** For a virtual entry (a package.json script), what part of the file counts. */
  part?: string;
}

export interface CommandRuns {
  files: RunFile[];
  /** Things the person should know (a package fetched from the registry at run time…). */
  notes: string[];
  /** Why Keel cannot tell what runs; empty when it can. */
  unresolved: string[];
}

export interface CommandContext {
  workspace: string;
  home: string;
  /** The PATH the command runs with (its relative or workspace entries are searched). */
  pathEnv?: string;
}

type Input = { shell: string } | { words: string[] };

const MAX_FILES = 200;
/** Extensions of files that are code, whatever their mode. */
const CODE_EXT = /\.(m?[jt]sx?|c[jt]s|py|pyw|sh|bash|zsh|ksh|fish|rb|pl|pm|php|lua|ps1|bat|cmd|jar|wasm|so|dylib|node)$/i;
const MAX_DEPTH = 5;
/** What `input` runs from the disk, resolved from `ctx.workspace` (hooks and servers run there). */
export function commandRuns(input: Input, ctx: CommandContext): CommandRuns {
  const acc = new Collector(ctx);
  if ('shell' in input) acc.script(input.shell, 0, false);
  else acc.simple({ words: input.words.map((text) => ({ text, literal: true, pattern: false })) }, 0, false, []);
  return acc.result();
}

class Collector {
  private readonly files = new Map<string, RunFile>();
  private readonly notes: string[] = [];
  private readonly unresolved: string[] = [];
  private readonly scanned = new Set<string>();
  private readonly ws: string;
  private readonly wsReal: string;

  constructor(private readonly ctx: CommandContext) {
    this.ws = resolve(ctx.workspace);
    this.wsReal = safeReal(this.ws);
  }

  result(): CommandRuns {
    return { files: [...this.files.values()], notes: [...new Set(this.notes)], unresolved: [...new Set(this.unresolved)] };
  }

  /** A shell script's text. `nested`: inside a script file (its unknowns are notes, not blockers). */
  script(text: string, depth: number, nested: boolean, extraPath: string[] = []): void {
    const parsed = parseCommandLine(text, { CLAUDE_PROJECT_DIR: this.ws, HOME: this.ctx.home, PWD: this.ws });
    for (const p of parsed.problems) this.unknown(`it holds ${p}`, nested);
    for (const c of parsed.commands) this.simple(c, depth, nested, extraPath);
  }

  simple(cmd: SimpleCommand, depth: number, nested: boolean, extraPath: string[]): void {
    if (depth > MAX_DEPTH) return this.unknown('it nests scripts too deeply', nested);
    for (const w of cmd.words) if (w.literal) this.mention(w.text);
    let words = cmd.words;
    // Leading assignments; one that changes where programs are found hides what runs.
    while (words[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0].text)) {
      const name = words[0].text.slice(0, words[0].text.indexOf('='));
      if (/^(PATH|BASH_ENV|ENV|NODE_OPTIONS|LD_PRELOAD|LD_LIBRARY_PATH|PYTHONPATH|PYTHONSTARTUP|NODE_PATH)$/.test(name)) this.unknown(`it sets ${name} for a command`, nested);
      words = words.slice(1);
    }
    while (words[0]?.literal && KEYWORDS.has(words[0].text)) words = words.slice(1);
    const head = words[0];
    if (!head) return;
    if (head.literal && (NOT_COMMANDS.has(head.text) || NO_EXEC.has(head.text))) return;
    if (!head.literal || head.pattern) return this.unknown(`the program ${head.text} is computed when it runs`, nested);
    this.program(head.text, words.slice(1), depth, nested, extraPath);
  }

  private program(name: string, args: Word[], depth: number, nested: boolean, extraPath: string[]): void {
    const prog = basename(name);
    if (NO_EXEC.has(name)) return;
    if (name.includes('/')) this.add(this.abs(name), true);
    else this.lookUp(name, extraPath);
    const next = (rest: Word[]) => this.simple({ words: rest }, depth + 1, nested, extraPath);
    const need = (w: Word | undefined, what: string): w is Word => {
      if (!w) return false;
      if (!w.literal || w.pattern) {
        this.unknown(`${what} (${w.text}) is computed when it runs`, nested);
        return false;
      }
      return true;
    };
    switch (prog) {
      case 'command':
      case 'builtin':
      case 'exec':
      case 'nohup':
      case 'stdbuf':
      case 'sudo':
      case 'doas':
      case 'nice':
      case 'timeout':
      case 'setsid':
        return next(skipWrapperOptions(prog, args));
      case 'env': {
        let rest = args;
        while (rest[0]?.literal && (rest[0].text.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0].text))) {
          if (/^-(S|-split-string)/.test(rest[0].text)) return this.unknown('env -S splits its own command line', nested);
          rest = rest.slice(rest[0].text === '-u' || rest[0].text === '-C' ? 2 : 1);
        }
        return next(rest);
      }
      case 'xargs': {
        const rest = skipOptions(args, new Set(['-I', '-i', '-L', '-l', '-n', '-P', '-d', '-E', '-e', '-s', '-a', '--arg-file', '--delimiter', '--max-args', '--max-procs', '--replace']));
        return rest.length ? next(rest) : undefined;
      }
      case 'eval':
        if (args.every((a) => a.literal)) return this.script(args.map((a) => a.text).join(' '), depth + 1, nested, extraPath);
        return this.unknown('eval runs a computed script', nested);
      case 'source':
      case '.':
        if (need(args[0], 'the sourced file')) this.add(this.abs(args[0].text), true);
        return;
      case 'npx':
      case 'pnpx':
      case 'bunx':
        return this.packageBin(args, nested);
      case 'npm':
      case 'pnpm':
      case 'yarn':
      case 'bun':
        return this.packageManager(prog, args, depth, nested);
      case 'make':
      case 'gmake': {
        const f = optionValue(args, ['-f', '--file', '--makefile']);
        for (const m of f ? [f] : ['GNUmakefile', 'makefile', 'Makefile']) this.add(this.abs(m), !f && m !== 'Makefile' ? false : true);
        return;
      }
      case 'just':
        for (const m of ['justfile', 'Justfile', '.justfile']) this.add(this.abs(m), false);
        return;
    }
    if (SHELLS.has(prog)) return this.shell(args, depth, nested);
    const lang = JS_RUNTIMES.has(prog) ? 'js' : /^python[0-9.]*$/.test(prog) ? 'python' : prog === 'perl' ? 'perl' : prog === 'ruby' ? 'ruby' : prog === 'php' ? 'php' : null;
    if (lang) return this.interpreter(lang, prog, args, nested);
  }

  private shell(args: Word[], depth: number, nested: boolean): void {
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.literal && /^-[A-Za-z]*c[A-Za-z]*$/.test(a.text)) {
        const body = args[i + 1];
        if (!body) return;
        if (!body.literal) return this.unknown('a shell runs a computed script', nested);
        return this.script(body.text, depth + 1, nested);
      }
      if (a.literal && (a.text === '-o' || a.text === '+o' || a.text === '-O' || a.text === '+O')) {
        i++;
        continue;
      }
      if (a.literal && /^[-+]/.test(a.text) && a.text !== '-' && a.text !== '--') continue;
      if (a.literal && a.text === '--') continue;
      if (!a.literal || a.pattern) return this.unknown(`the script ${a.text} is computed when it runs`, nested);
      this.add(this.abs(a.text), true);
      return;
    }
  }

  private interpreter(lang: string, prog: string, args: Word[], nested: boolean): void {
    const codeOpts = CODE_OPTIONS[lang] ?? new Set<string>();
    let rest = args;
    if ((prog === 'deno' || prog === 'bun') && rest[0]?.literal && /^(run|x|test)$/.test(rest[0].text)) rest = rest.slice(1);
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      if (!a.literal) return this.unknown(`an argument of ${prog} (${a.text}) is computed when it runs`, nested);
      const [opt, attached] = a.text.startsWith('--') && a.text.includes('=') ? [a.text.slice(0, a.text.indexOf('=')), a.text.slice(a.text.indexOf('=') + 1)] : [a.text, undefined];
      if (codeOpts.has(opt)) {
        const code = attached ?? rest[i + 1]?.text;
        if (attached === undefined && rest[i + 1] && !rest[i + 1]!.literal) return this.unknown(`${prog} ${opt} runs computed code`, nested);
        if (code !== undefined) this.notes.push(`runs inline code given to ${prog} ${opt}`);
        return;
      }
      if (lang === 'python' && opt === '-m') {
        const mod = attached ?? rest[i + 1]?.text;
        if (mod) this.pythonModule(mod);
        return;
      }
      if (FILE_OPTIONS.has(opt)) {
        const f = attached ?? rest[++i]?.text;
        if (f) this.add(this.abs(f), f.startsWith('.') || f.includes('/'));
        continue;
      }
      if (ARG_OPTIONS.has(opt) && attached === undefined) {
        i++;
        continue;
      }
      if (opt.startsWith('-') && opt !== '-') continue;
      if (a.pattern) return this.unknown(`the script ${a.text} is a pattern`, nested);
      this.add(this.abs(a.text), true);
      return;
    }
  }

  private pythonModule(mod: string): void {
    const rel = mod.split('.').join(sep);
    const candidates = [join(this.ws, `${rel}.py`), join(this.ws, rel, '__main__.py'), join(this.ws, rel, '__init__.py')];
    const hit = candidates.find(existsSync);
    if (hit) this.add(hit, true);
  }

  /** `npx NAME` and friends: the workspace's installed bin, or a registry package fetched when it runs. */
  private packageBin(args: Word[], nested: boolean): void {
    const rest = skipOptions(args, new Set(['-p', '--package', '-c', '--call']));
    const call = optionValue(args, ['-c', '--call']);
    if (call !== undefined) return this.script(call, 1, nested, [join(this.ws, 'node_modules', '.bin')]);
    const pkg = rest[0];
    if (!pkg) return;
    if (!pkg.literal) return this.unknown(`the package ${pkg.text} is computed when it runs`, nested);
    this.bin(pkg.text);
  }

  private bin(spec: string): void {
    const name = spec.replace(/^(@[^/]+\/)?([^@]+)(@.*)?$/, '$2');
    const p = join(this.ws, 'node_modules', '.bin', name);
    if (existsSync(p)) this.add(p, true);
    else this.notes.push(`${spec} is not installed in this workspace's node_modules: it is fetched from the npm registry when it runs`);
  }

  private packageManager(prog: string, args: Word[], depth: number, nested: boolean): void {
    const rest = skipOptions(args, new Set(['--prefix', '-C', '--dir', '--cwd', '-w', '--workspace', '--filter', '-F']));
    const sub = rest[0];
    if (!sub) return;
    if (!sub.literal) return this.unknown(`${prog}'s command (${sub.text}) is computed when it runs`, nested);
    const s = sub.text;
    if (s === 'exec' || s === 'x' || s === 'dlx') return this.packageBin(rest.slice(1), nested);
    const lifecycle = new Set(['test', 't', 'tst', 'start', 'stop', 'restart']);
    if (s === 'run' || s === 'run-script' || s === 'rum' || s === 'urn') {
      const name = skipOptions(rest.slice(1), new Set())[0];
      if (!name) return;
      if (!name.literal) return this.unknown(`the script name (${name.text}) is computed when it runs`, nested);
      return this.packageScript(name.text, depth, nested, prog !== 'npm');
    }
    if (lifecycle.has(s)) return this.packageScript(s === 't' || s === 'tst' ? 'test' : s, depth, nested, false);
    // `yarn lint`, `pnpm lint`, `bun lint`: a script when one has that name, else a bin.
    if (prog !== 'npm' && !['install', 'i', 'add', 'remove', 'init', 'create', 'publish', 'info', 'why', 'list', 'ls'].includes(s)) {
      if (this.scripts()[s] !== undefined) return this.packageScript(s, depth, nested, true);
      this.bin(s);
    }
  }

  /** `npm run NAME`: the script's text (and its pre/post scripts), then what that text runs. */
  private packageScript(name: string, depth: number, nested: boolean, orBin: boolean): void {
    const scripts = this.scripts();
    const pkgPath = join(this.ws, 'package.json');
    const texts = [`pre${name}`, name, `post${name}`].map((n) => scripts[n]);
    if (texts[1] === undefined && orBin) return this.bin(name);
    const key = `${pkgPath}#scripts.${name}`;
    if (!this.files.has(key)) {
      this.files.set(key, { path: pkgPath, display: `package.json (script "${name}")`, digest: existsSync(pkgPath) ? digestOf(texts) : 'absent', inWorkspace: true, part: `scripts.${name}` });
      const bin = join(this.ws, 'node_modules', '.bin');
      for (const t of texts) if (t) this.script(t, depth + 1, nested, [bin]);
    }
  }

  private scripts(): Record<string, string | undefined> {
    try {
      const json = JSON.parse(readFileSync(join(this.ws, 'package.json'), 'utf8')) as { scripts?: unknown };
      const s = json.scripts;
      if (typeof s !== 'object' || s === null) return {};
      return Object.fromEntries(Object.entries(s).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch {
      return {};
    }
  }

  /** A program named without a slash: PATH entries that are relative or inside the workspace. */
  private lookUp(name: string, extraPath: string[]): void {
    const entries = [...extraPath, ...(this.ctx.pathEnv ?? '').split(delimiter)].filter(Boolean);
    for (const e of entries) {
      const dir = resolve(this.ws, e);
      if (isAbsolute(e) && !this.inside(dir) && !extraPath.includes(e)) continue;
      const p = join(dir, name);
      if (existsSync(p)) {
        this.add(p, false);
        return;
      }
    }
  }

  /**
   * A literal word naming an existing file that is code (a script by its extension, its `#!`
   * line or its executable bit; not a system one) counts as a file it runs. Data files it names
   * (a log, a database) are not part of the approval: they change as it works.
   */
  private mention(word: string): void {
    const values = [word];
    const eq = word.indexOf('=');
    if (word.startsWith('-') && eq > 0) values.push(word.slice(eq + 1));
    for (const v of values) {
      if (!v || v.startsWith('-') || v.length > 4096) continue;
      const p = this.abs(v);
      if (SYSTEM_PREFIXES.some((s) => p.startsWith(s))) continue;
      try {
        const st = statSync(p);
        if (st.isFile() && (CODE_EXT.test(p) || (st.mode & 0o111) !== 0 || scriptKind(p) !== 'other')) this.add(p, false);
      } catch {
        // Not a file: an ordinary argument.
      }
    }
  }

  /**
   * Adds `path` (digested now). `evenIfAbsent`: a script the command runs by name: when it does
   * not exist yet, creating it later is a change. Scripts are followed into what they load or run.
   */
  private add(path: string, evenIfAbsent: boolean): void {
    if (this.files.size >= MAX_FILES) {
      this.unknown(`it uses more than ${MAX_FILES} files`, false);
      return;
    }
    if (this.files.has(path)) return;
    if (SYSTEM_PREFIXES.some((s) => path.startsWith(s))) return;
    const digest = fileDigest(path);
    if (digest === 'absent' && !evenIfAbsent) return;
    if (digest === 'not-a-file') {
      for (const index of ['index.js', 'index.mjs', 'index.cjs', 'index.ts', '__main__.py', 'package.json']) {
        const p = join(path, index);
        if (existsSync(p)) this.add(p, false);
      }
      return;
    }
    const real = safeReal(path);
    const inWorkspace = this.inside(path) || this.inside(real);
    this.files.set(path, { path, display: this.display(path), digest, inWorkspace });
    // What a file outside the workspace loads is the person's or the system's, not the
    // repository's: the file named is covered, its own imports are not followed.
    if (inWorkspace) this.follow(real === path ? path : real);
  }

  private follow(path: string): void {
    if (this.scanned.has(path)) return;
    this.scanned.add(path);
    const kind = scriptKind(path);
    if (kind === 'shell') {
      const text = scriptText(path);
      for (const s of shellSources(text, this.ws)) this.add(s, true);
      this.script(text, 2, true);
      return;
    }
    for (const dep of localImports(path, kind, this.ws)) this.add(dep, false);
  }

  private unknown(why: string, nested: boolean): void {
    if (nested) this.notes.push(`Keel cannot see every file a script it runs uses: ${why}`);
    else this.unresolved.push(why);
  }

  private abs(p: string): string {
    if (p === '~' || p.startsWith('~/')) return join(this.ctx.home, p.slice(1));
    return resolve(this.ws, p);
  }

  private inside(p: string): boolean {
    for (const root of [this.ws, this.wsReal]) {
      const rel = relative(root, p);
      if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) return true;
    }
    return false;
  }

  private display(p: string): string {
    const rel = relative(this.ws, p);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : p;
  }
}

function safeReal(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}
