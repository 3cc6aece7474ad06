import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Parser, Tree } from 'web-tree-sitter';

// The CommonJS build on purpose: the ESM build calls createRequire(import.meta.url), which is
// undefined once esbuild bundles it into dist/cli.js and dist/extension.js (CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const treeSitter = require('web-tree-sitter') as typeof import('web-tree-sitter');

/**
 * The bash parser: tree-sitter-bash through web-tree-sitter. Loaded once per process; the wasm
 * files sit next to the bundle (scripts/build.mjs copies them into dist/) or, in tests and
 * development, in node_modules.
 */
let loading: Promise<Parser> | undefined;
let loaded: Parser | undefined;

function candidates(file: string, pkg: string): string[] {
  const out: string[] = [];
  if (typeof __dirname !== 'undefined') {
    out.push(join(__dirname, file));
    out.push(join(__dirname, '..', 'node_modules', pkg, file));
    out.push(join(__dirname, '..', '..', '..', '..', 'node_modules', pkg, file));
  }
  out.push(join(process.cwd(), 'node_modules', pkg, file));
  for (const spec of [`${pkg}/package.json`, pkg]) {
    try {
      out.push(join(dirname(require.resolve(spec)), file));
    } catch {
      /* not resolvable from here (bundled, or not exported) */
    }
  }
  return out;
}

/** The first existing path of a wasm file, or throws with every place it looked. */
export function locateWasm(file: string, pkg: string): string {
  const tried = candidates(file, pkg);
  const found = tried.find((p) => existsSync(p));
  if (!found) throw new Error(`cannot find ${file}; looked in: ${tried.join(', ')}`);
  return found;
}

/**
 * Loads the parser once. Rejects (every time) when a wasm file is missing.
 *
 * Both wasm modules are compiled synchronously on this thread (`new WebAssembly.Module`; V8
 * compiles their functions lazily, on first call). The asynchronous path web-tree-sitter takes
 * by default hands compilation to background threads and waits for them: on a busy machine that
 * wait was most of a cold decision (docs/benchmarks.md, permissions).
 */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    const runtime = readFileSync(locateWasm('web-tree-sitter.wasm', 'web-tree-sitter'));
    await treeSitter.Parser.init({
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
        const module = new WebAssembly.Module(runtime);
        done(new WebAssembly.Instance(module, imports), module);
        return {};
      },
    });
    const bash = treeSitter.Language.loadSync(new WebAssembly.Module(readFileSync(locateWasm('tree-sitter-bash.wasm', 'tree-sitter-bash'))));
    const parser = new treeSitter.Parser();
    parser.setLanguage(bash);
    loaded = parser;
    return parser;
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/**
 * A script with most of the grammar. V8 compiles wasm and JavaScript functions when they are
 * first called, so the first decisions of a process cost more; the engine checks this script
 * once when the process is idle after it loaded (engine.ts), and a process's first analyses get
 * a larger time budget meanwhile (bounds.ts), so that compiling never turns a command into a
 * question.
 */
export const WARM_UP = [
  'cd src && ls -la | grep "x$(echo y)" > out 2>&1; for f in *.ts; do echo "$f" ${f%.ts}; done',
  "if [ -f a ]; then (cat a) else { b; } fi; cat <<'EOF'\nhi $x\nEOF",
  'x=$((1+2)) y=`z` env A=1 f; case $a in b) c;; *) d;; esac; f() { :; }; echo $\'x\' "$@" {a,b} ~/x <(ls) >(cat) && a || b & wait',
  'while read -r l; do [[ $l == x* ]] && break; done < file; declare -x P=1; exec 3<>f; time ! a |& b',
].join('\n');

/** The parser when already loaded (after `loadBashParser` resolved), else undefined. */
export function loadedBashParser(): Parser | undefined {
  return loaded;
}

/**
 * Parses and hands the tree to `use`, freeing it afterwards. Null tree: the parser gave up, or
 * `cancel` returned true (it is polled while parsing; the parser is then reset for the next use).
 */
export function withTree<T>(parser: Parser, source: string, use: (tree: Tree | null) => T, cancel?: () => boolean): T {
  let cancelled = false;
  const tree = cancel
    ? parser.parse(source, null, {
        progressCallback: () => {
          cancelled ||= cancel();
          return cancelled;
        },
      })
    : parser.parse(source);
  if (!tree || cancelled) parser.reset();
  try {
    return use(tree);
  } finally {
    tree?.delete();
  }
}
