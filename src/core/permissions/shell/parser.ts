import { existsSync } from 'node:fs';
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

/** Loads the parser once. Rejects (every time) when a wasm file is missing. */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    const runtime = locateWasm('web-tree-sitter.wasm', 'web-tree-sitter');
    await treeSitter.Parser.init({ locateFile: () => runtime });
    const bash = await treeSitter.Language.load(locateWasm('tree-sitter-bash.wasm', 'tree-sitter-bash'));
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

/** The parser when already loaded (after `loadBashParser` resolved), else undefined. */
export function loadedBashParser(): Parser | undefined {
  return loaded;
}

/** Parses and hands the tree to `use`, freeing it afterwards. Null tree: the parser gave up. */
export function withTree<T>(parser: Parser, source: string, use: (tree: Tree | null) => T): T {
  const tree = parser.parse(source);
  try {
    return use(tree);
  } finally {
    tree?.delete();
  }
}
