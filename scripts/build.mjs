// Bundles the three runtimes of Keel with esbuild:
//   dist/extension.js  the VS Code extension host entry (cjs, node20, 'vscode' external)
//   dist/cli.js        the headless `keel` CLI (cjs, node20, with a shebang)
//   dist/worker.js     a pool's worker process (cjs, node20): only what running a query needs, so
//                      an idle worker stays small (docs/workers.md); `keel worker` is the same code
//   dist/webview.js    the chat UI (iife, browser) and dist/webview.css
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = !watch && process.env.KEEL_DEV !== '1';

rmSync('dist', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });

// Static assets that run: codicons font + css, and the tree-sitter wasm files used by the
// permission engine's shell parser.
const codicons = dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
cpSync(join(codicons, 'codicon.css'), 'dist/codicon.css');
cpSync(join(codicons, 'codicon.ttf'), 'dist/codicon.ttf');
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

const configs = [
  {
    ...common,
    entryPoints: { extension: 'src/extension/extension.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    entryPoints: { worker: 'src/cli/workerEntry.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
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
  for (const c of configs) {
    const ctx = await esbuild.context(c);
    await ctx.watch();
  }
  console.log('watching…');
} else {
  await Promise.all(configs.map((c) => esbuild.build(c)));
}
