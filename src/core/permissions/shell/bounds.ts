/**
 * Bounds on the shell analysis, so that every decision is quick whatever the input. A command
 * past a bound is not analysed at all: it asks (it is never allowed by the read-only shortcut or
 * a specific rule).
 *
 * `scanBounds` is one linear pass over the text, run before the parser: it stops the shapes that
 * make tree-sitter-bash (or the walk) slow in proportion to their size — deep nesting, very long
 * pipelines, very many words. Some short inputs still make tree-sitter's GLR parser explore
 * many readings (`(ls)(ls)…`, `f() )) f() ))…`: a few KB, seconds of parsing), so an
 * `AnalysisBudget` also stops the parser (through its progress callback), the tree walk, nested
 * inline scripts and glob expansion of one decision. It counts this process's CPU time, not the
 * wall clock, so that a busy machine (where a 1 ms parse can take 100 ms of wall time) does not
 * turn ordinary commands into questions; a wall-clock limit well above it is the last resort.
 */
export const LIMITS = {
  /** Bytes of one command (or inline script). */
  bytes: 100 * 1024,
  /** Open constructs inside one another: `$(`, `(`, `{`, `[`, `${`, quotes, backticks. */
  depth: 64,
  /** Words and operators outside quotes and here-document bodies. */
  tokens: 2_500,
  /** `|` and `|&` (tree-sitter-bash parses long pipelines in more than linear time). */
  pipes: 128,
  /** CPU time for the whole analysis of one Bash call (parse, walk, nested scripts, globs). */
  analysisCpuMs: 50,
  /** Wall-clock time for the same, whatever the CPU accounting says. */
  analysisWallMs: 500,
  /** Directory entries all glob expansions of one decision may look at. */
  globEntries: 20_000,
} as const;

/** Why `source` is past a bound (a sentence for people), or null. Linear in its length. */
export function scanBounds(source: string): string | null {
  if (source.length > LIMITS.bytes || Buffer.byteLength(source, 'utf8') > LIMITS.bytes) return `the command is longer than ${LIMITS.bytes / 1024} KB, too long to check`;
  if (source.includes('\0')) return 'the command holds a NUL character';
  return new Scanner(source).run();
}

/**
 * Whether this process has compiled the analysis code yet (engine.ts runs a warm-up check when
 * idle after loading). Until then V8 compiles functions on their first call, which costs a cold
 * decision several times the CPU a warm one takes: the budget of a process's first analyses (at
 * most three, or until the warm-up ran) is COLD_FACTOR times larger, so that compiling never
 * turns an ordinary command into "took too long to analyse".
 */
let warm = false;
const COLD_FACTOR = 5;
/** Analyses that may still get the cold budget (a process that never idles is warm after them). */
let coldLeft = 3;

/** Marks this process's analysis code as compiled (after the engine's warm-up). */
export function markAnalysisWarm(): void {
  warm = true;
}

/** Whether the next analysis gets the cold budget; counts it. */
function coldAnalysis(): boolean {
  if (warm) return false;
  if (--coldLeft <= 0) warm = true;
  return true;
}

/** The time (and glob work) one decision's analysis may spend. */
export class AnalysisBudget {
  private readonly cpuStart = process.cpuUsage();
  private readonly wallStart = performance.now();
  private nextCpuCheck: number;
  private hit = false;
  private entries: number = LIMITS.globEntries;

  private readonly cpuMs: number;
  private readonly wallMs: number;

  constructor(cpuMs: number = LIMITS.analysisCpuMs, wallMs: number = LIMITS.analysisWallMs) {
    const factor = coldAnalysis() ? COLD_FACTOR : 1;
    this.cpuMs = cpuMs * factor;
    this.wallMs = wallMs * factor;
    this.nextCpuCheck = this.wallStart + cpuMs;
  }

  /**
   * True once the time is up (and from then on). Cheap: the CPU clock (a system call) is read
   * only once the wall clock says it could be up, and then at most once a millisecond.
   */
  expired(): boolean {
    if (this.hit) return true;
    const now = performance.now();
    if (now - this.wallStart > this.wallMs) return (this.hit = true);
    if (now < this.nextCpuCheck) return false;
    this.nextCpuCheck = now + 1;
    const cpu = process.cpuUsage(this.cpuStart);
    if ((cpu.user + cpu.system) / 1000 > this.cpuMs) this.hit = true;
    return this.hit;
  }

  /** Takes `n` directory entries for glob matching; false (and nothing taken) when too few are left. */
  spendEntries(n: number): boolean {
    if (n > this.entries) return false;
    this.entries -= n;
    return true;
  }
}

type Frame = '(' | '{' | '[' | '"' | '`';

class Scanner {
  private readonly stack: Frame[] = [];
  private tokens = 0;
  private pipes = 0;
  private i = 0;
  private inWord = false;
  private deep = false;
  /** Here-documents whose bodies start at the next newline: [delimiter, quoted, strip tabs]. */
  private pending: [string, boolean, boolean][] = [];

  constructor(private readonly s: string) {}

  run(): string | null {
    const s = this.s;
    while (this.i < s.length) {
      if (this.deep) return this.tooDeep();
      const ch = s[this.i] as string;
      const top = this.stack[this.stack.length - 1];
      if (top === '"') {
        this.inDouble(ch);
        continue;
      }
      if (/\s|[;|&<>()]/.test(ch)) {
        if (ch === '\n' && this.pending.length > 0) {
          this.i++;
          this.inWord = false;
          const why = this.heredocBodies();
          if (why) return why;
          continue;
        }
        this.inWord = false;
        if (!/\s/.test(ch) && this.token()) return this.tooMany();
        if (ch === '|' && s[this.i - 1] !== '|' && s[this.i + 1] !== '|' && ++this.pipes > LIMITS.pipes) return `the command pipes more than ${LIMITS.pipes} commands together, too many to check`;
        if (ch === '<' && s[this.i + 1] === '<' && s[this.i + 2] !== '<') {
          this.heredocStart();
          continue;
        }
        if (ch === '(' && this.push('(')) return this.tooDeep();
        if (ch === ')') this.pop('(');
        this.i++;
        continue;
      }
      if (!this.inWord) {
        this.inWord = true;
        if (this.token()) return this.tooMany();
        if (ch === '#') {
          while (this.i < s.length && s[this.i] !== '\n') this.i++;
          continue;
        }
      }
      switch (ch) {
        case '\\':
          this.i += 2;
          continue;
        case "'":
          this.skipSingle(this.i > 0 && s[this.i - 1] === '$');
          continue;
        case '"':
          if (this.push('"')) return this.tooDeep();
          break;
        case '`':
          if (top === '`') this.stack.pop();
          else if (this.push('`')) return this.tooDeep();
          break;
        case '{':
        case '[':
          if (this.push(ch)) return this.tooDeep();
          break;
        case '}':
          this.pop('{');
          break;
        case ']':
          this.pop('[');
          break;
        default:
          break;
      }
      this.i++;
    }
    return this.deep ? this.tooDeep() : null;
  }

  /** Inside "…": only `\`, `$(`, `${`, backticks and the closing quote matter. */
  private inDouble(ch: string): void {
    const s = this.s;
    if (ch === '\\') this.i += 2;
    else if (ch === '"') {
      this.stack.pop();
      this.i++;
    } else if (ch === '$' && (s[this.i + 1] === '(' || s[this.i + 1] === '{')) {
      this.push(s[this.i + 1] === '(' ? '(' : '{');
      this.i += 2;
      this.inWord = false;
    } else if (ch === '`') {
      this.push('`');
      this.i++;
    } else this.i++;
  }

  private skipSingle(ansi: boolean): void {
    const s = this.s;
    this.i++;
    while (this.i < s.length && s[this.i] !== "'") this.i += ansi && s[this.i] === '\\' ? 2 : 1;
    this.i++;
  }

  /** `<<` or `<<-` and its delimiter word; the body is read at the next newline. */
  private heredocStart(): void {
    const s = this.s;
    this.i += 2;
    const strip = s[this.i] === '-';
    if (strip) this.i++;
    while (s[this.i] === ' ' || s[this.i] === '\t') this.i++;
    let delim = '';
    let quoted = false;
    while (this.i < s.length && !/\s|[;|&<>()]/.test(s[this.i] as string)) {
      const ch = s[this.i] as string;
      if (ch === "'" || ch === '"') {
        quoted = true;
        const end = s.indexOf(ch, this.i + 1);
        const stop = end < 0 ? s.length : end;
        delim += s.slice(this.i + 1, stop);
        this.i = stop + 1;
      } else if (ch === '\\') {
        quoted = true;
        delim += s[this.i + 1] ?? '';
        this.i += 2;
      } else {
        delim += ch;
        this.i++;
      }
    }
    if (delim !== '') this.pending.push([delim, quoted, strip]);
  }

  /**
   * Skips the bodies of the pending here-documents. An unquoted body can hold `$(`…: its nesting
   * counts (and is dropped after the body, where bash stops reading it).
   */
  private heredocBodies(): string | null {
    const s = this.s;
    const bodies = this.pending;
    this.pending = [];
    for (const [delim, quoted, strip] of bodies) {
      const base = this.stack.length;
      while (this.i < s.length) {
        let end = s.indexOf('\n', this.i);
        if (end < 0) end = s.length;
        const line = s.slice(this.i, end);
        const at = this.i;
        this.i = end + 1;
        if ((strip ? line.replace(/^\t+/, '') : line) === delim) break;
        if (quoted) continue;
        for (let k = at; k < end; k++) {
          const ch = s[k];
          if (ch === '\\') k++;
          else if ((ch === '$' && (s[k + 1] === '(' || s[k + 1] === '{')) || ch === '`') {
            if (this.push('(')) return this.tooDeep();
          } else if ((ch === ')' || ch === '}') && this.stack.length > base) this.stack.pop();
        }
      }
      this.stack.length = base;
    }
    return null;
  }

  /** Pushes a frame; true (and remembered) when that goes past the depth bound. */
  private push(f: Frame): boolean {
    this.stack.push(f);
    if (this.stack.length > LIMITS.depth) this.deep = true;
    return this.deep;
  }

  /** Closes the innermost frame of kind `f`, if it is the innermost one. */
  private pop(f: Frame): void {
    if (this.stack[this.stack.length - 1] === f) this.stack.pop();
  }

  private token(): boolean {
    return ++this.tokens > LIMITS.tokens;
  }

  private tooDeep(): string {
    return `the command nests more than ${LIMITS.depth} levels deep, too deep to check`;
  }

  private tooMany(): string {
    return `the command has more than ${LIMITS.tokens} words and operators, too many to check`;
  }
}
