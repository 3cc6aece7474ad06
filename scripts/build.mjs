// Bundles the runtimes of Keel with esbuild:
//   dist/worker.js     a pool's worker process (cjs, node20): its entry; `keel worker` is the same code
//   dist/core.js       every module a worker runs, bundled once and initialised on first use, so an
//                      idle worker loads only what running a query needs (docs/workers.md)
//   dist/extension.js  the VS Code extension host entry (cjs, node20, 'vscode' external): what only
//                      the window runs; the modules core.js holds it takes from there
//                      (scripts/sharedCore.mjs: one copy of each module in the .vsix)
//   dist/cli.js        the headless `keel` CLI (cjs, node20, with a shebang), self-contained: it is
//                      not in the .vsix, and `keel` starts without reading core.js
//   dist/webview.js    the chat UI (iife, browser) and dist/webview.css
// `--watch` builds the extension and the worker self-contained (no core.js to keep in step).
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { buildExtension, buildWorker } from './sharedCore.mjs';
import { subsetCodicons, usedCodicons } from './codiconSubset.mjs';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = !watch && process.env.KEEL_DEV !== '1';

rmSync('dist', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });

// Static assets that run: codicons font + css, and the tree-sitter wasm files used by the
// permission engine's shell parser.
const codicons = dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
// Only the icons the webview names (scripts/codiconSubset.mjs): ~50 of ~650 glyphs.
const icons = await subsetCodicons(readFileSync(join(codicons, 'codicon.css'), 'utf8'), readFileSync(join(codicons, 'codicon.ttf')), usedCodicons('webview'));
writeFileSync('dist/codicon.css', icons.css);
writeFileSync('dist/codicon.ttf', icons.font);
// (web-tree-sitter's exports do not list package.json, so resolve its main file instead.)
for (const [entry, file] of [['web-tree-sitter', 'web-tree-sitter.wasm'], ['tree-sitter-bash/package.json', 'tree-sitter-bash.wasm']]) {
  const p = join(dirname(require.resolve(entry)), file);
  if (!existsSync(p)) throw new Error(`build: ${p} is missing; the shell parser needs it`);
  cpSync(p, join('dist', file));
}

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
};

const node = { platform: 'node', format: 'cjs', target: 'node20' };
// The window's bundles: built together with core.js (below), or on their own when watching.
const windowBundles = [
  { ...common, ...node, outdir: 'dist', entryPoints: { extension: 'src/extension/extension.ts' }, external: ['vscode'] },
  { ...common, ...node, outdir: 'dist', entryPoints: { worker: 'src/cli/workerEntry.ts' } },
];
const configs = [
  {
    ...common,
    ...node,
    outdir: 'dist',
    entryPoints: { cli: 'src/cli/main.ts' },
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    entryPoints: { webview: 'webview/main.tsx' },
    outdir: 'dist',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'css' },
  },
];

if (watch) {
  for (const c of [...windowBundles, ...configs]) {
    const ctx = await esbuild.context(c);
    await ctx.watch();
  }
  console.log('watching…');
} else {
  const shared = (async () => {
    const worker = await buildWorker(esbuild, { ...common, ...node }, 'dist', 'src/cli/workerEntry.ts');
    await buildExtension(esbuild, worker, 'src/extension/extension.ts', ['vscode']);
  })();
  await Promise.all([shared, ...configs.map((c) => esbuild.build(c))]);
}
