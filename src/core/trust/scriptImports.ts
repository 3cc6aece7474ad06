import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';

/**
 * The local files a script loads as code, read from its text without running it: relative
 * `import`/`export … from`/`import()`/`require()` of JavaScript and TypeScript, Python imports of
 * modules found beside the script or at the workspace root, and shell `source`/`.` of a literal
 * path (shell scripts are otherwise read by commandFiles.ts, which sees the commands they run).
 * What is computed at run time (`require(name)`, `importlib`) is out of reach: the docs say so.
 * Never throws.
 */
export type ScriptKind = 'js' | 'python' | 'shell' | 'other';

const JS_EXT = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx']);
const JS_RESOLVE = ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx', '.json', '/index.js', '/index.mjs', '/index.cjs', '/index.ts'];
const MAX_SCAN_BYTES = 1024 * 1024;

/** What kind of script `path` is, by its extension or its `#!` line. */
export function scriptKind(path: string): ScriptKind {
  const ext = extname(path).toLowerCase();
  if (JS_EXT.has(ext)) return 'js';
  if (ext === '.py') return 'python';
  if (ext === '.sh' || ext === '.bash' || ext === '.zsh') return 'shell';
  const head = readHead(path, 256);
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(head);
  if (!m) return 'other';
  const prog = (m[1]!.endsWith('/env') ? (m[2] ?? '') : m[1]!).split('/').pop() ?? '';
  if (/^(node|nodejs|deno|bun|tsx|ts-node)$/.test(prog)) return 'js';
  if (/^python[0-9.]*$/.test(prog)) return 'python';
  if (/^(sh|bash|dash|zsh|ksh)$/.test(prog)) return 'shell';
  return 'other';
}

/** The text of a script, or '' when it is not a readable file of a sensible size. */
export function scriptText(path: string): string {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_SCAN_BYTES) return '';
  } catch {
    return '';
  }
  return readHead(path, MAX_SCAN_BYTES);
}

/** The local files `path` (a script of `kind`) imports, as absolute paths of existing files. */
export function localImports(path: string, kind: ScriptKind, workspace: string): string[] {
  if (kind === 'other' || kind === 'shell') return [];
  const text = scriptText(path);
  if (!text) return [];
  return kind === 'js' ? jsImports(path, text) : pythonImports(path, text, workspace);
}

function jsImports(path: string, text: string): string[] {
  const out: string[] = [];
  const specs = new Set<string>();
  const patterns = [
    /\b(?:import|export)\s+(?:[^'"`;]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g,
    /\b(?:require|import)\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) specs.add(m[1]!);
  for (const spec of specs) {
    const base = resolve(dirname(path), spec);
    const found = JS_RESOLVE.map((suffix) => base + suffix).find(isFile);
    // A `.js` specifier of a TypeScript source (`./x.js` → `./x.ts`).
    const ts = found ?? (/\.[cm]?js$/.test(base) ? [base.replace(/\.([cm]?)js$/, '.$1ts'), base.replace(/\.js$/, '.tsx')].find(isFile) : undefined);
    if (ts) out.push(ts);
  }
  return out;
}

function pythonImports(path: string, text: string, workspace: string): string[] {
  const out: string[] = [];
  const roots = [dirname(path), resolve(workspace)];
  for (const line of text.split('\n')) {
    const m = /^\s*(?:from\s+(\.*[\w.]*)\s+import\s+([\w, ]+)|import\s+([\w., ]+))/.exec(line);
    if (!m) continue;
    const modules: string[] = [];
    if (m[1] !== undefined) {
      const dots = /^\.*/.exec(m[1])![0].length;
      const rest = m[1].slice(dots);
      const base = dots > 0 ? resolve(dirname(path), ...Array<string>(dots - 1).fill('..')) : undefined;
      const names = m[2]!.split(',').map((s) => s.trim().split(/\s+/)[0]!).filter(Boolean);
      const candidates = rest ? [rest, ...names.map((n) => `${rest}.${n}`)] : names;
      for (const c of candidates) modules.push(base ? `${base}|${c}` : c);
    } else {
      for (const part of m[3]!.split(',')) {
        const name = part.trim().split(/\s+/)[0];
        if (name) modules.push(name);
      }
    }
    for (const mod of modules) {
      const [fixedBase, name] = mod.includes('|') ? (mod.split('|') as [string, string]) : [undefined, mod];
      const rel = name.split('.').join('/');
      for (const root of fixedBase ? [fixedBase] : roots) {
        const hit = [`${join(root, rel)}.py`, join(root, rel, '__init__.py')].find(isFile);
        if (hit) {
          out.push(hit);
          break;
        }
      }
    }
  }
  return out;
}

/** The literal files a shell script sources (`source x`, `. x`), relative to `cwd`. */
export function shellSources(text: string, cwd: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|[;&|\s])(?:source|\.)\s+(['"]?)([^\s'";&|$`]+)\1(?=[\s;&|]|$)/gm)) {
    const p = resolve(cwd, m[2]!);
    out.push(p);
  }
  return out;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function readHead(path: string, max: number): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const buf = Buffer.alloc(max);
    let total = 0;
    while (total < max) {
      const n = readSync(fd, buf, total, max - total, null);
      if (n <= 0) break;
      total += n;
    }
    const text = buf.subarray(0, total).toString('utf8');
    return text.includes('\u0000') ? '' : text;
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}
