// One copy of what the extension and its workers share (scripts/build.mjs).
//
//   dist/worker.js     the worker's entry only
//   dist/core.js       every module a worker runs (src/core, src/shared, the SDKs, xstate, zod, …),
//                      bundled once; its exports are loaders: `require('./core.js')[key]()`
//                      initialises that module (and what it imports) on first use
//   dist/extension.js  src/extension and what only the window uses (the MCP SDK, the store's
//                      readers, …); every module that is in core.js it takes from core.js
// So the .vsix holds each module once, a worker loads no more than it did as its own bundle, and a
// process has one xstate, one zod, one of every module, whichever bundle asked for it first.
import { builtinModules } from 'node:module';
import { relative, resolve, sep } from 'node:path';

// Run from the repository's root, as npm scripts and the bench runner do (this file is bundled
// into the benchmarks, where import.meta has no path).
const ROOT = process.cwd();
const BUILTIN = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const NAMESPACE = 'keel-core';
const SUFFIX = '#core';

const keyOf = (abs) => relative(ROOT, abs).split(sep).join('/');

/**
 * An esbuild plugin: an import made by a file `own(path)` accepts, that resolves to a file `own`
 * does not accept, becomes a loader call into ./core.js; its key is added to `keys`.
 */
function throughCore(own, keys) {
  return {
    name: 'through-core',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.throughCore || args.namespace === NAMESPACE) return undefined;
        if (!args.importer || !own(args.importer)) return undefined;
        if (args.path === 'vscode' || BUILTIN.has(args.path)) return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { throughCore: true } });
        if (r.errors.length > 0) return { errors: r.errors };
        if (r.external || own(r.path)) return undefined;
        const key = keyOf(r.path);
        keys.add(key);
        // Not the file's own extension: an .mjs path would make esbuild read the loader as ESM.
        return { path: `${key}${SUFFIX}`, namespace: NAMESPACE };
      });
      build.onResolve({ filter: /^\.\/core\.js$/, namespace: NAMESPACE }, () => ({ path: './core.js', external: true }));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: `module.exports = require('./core.js')[${JSON.stringify(args.path.slice(0, -SUFFIX.length))}]();\n`,
        loader: 'js',
        resolveDir: ROOT,
      }));
    },
  };
}

/** The entry of core.js: one loader per key (a `require` that esbuild initialises lazily). */
function coreEntry(keys) {
  const lines = [...keys].sort().map((k) => `  ${JSON.stringify(k)}: () => require(${JSON.stringify(resolve(ROOT, k))}),`);
  return `module.exports = {\n${lines.join('\n')}\n};\n`;
}

async function buildCore(esbuild, options, outdir, keys) {
  const r = await esbuild.build({
    ...options,
    outfile: `${outdir}/core.js`,
    metafile: true,
    stdin: { contents: coreEntry(keys), resolveDir: ROOT, sourcefile: 'core-entry.js', loader: 'js' },
  });
  return new Set(Object.keys(r.metafile.inputs).map((p) => keyOf(resolve(ROOT, p))));
}

/**
 * Builds `worker.js` (from `entry`) and `core.js` into `outdir`. `options`: esbuild's shared
 * options (bundle, platform node, format cjs, minify, …). Returns what the extension's build needs.
 */
export async function buildWorker(esbuild, options, outdir, entry) {
  const keys = new Set();
  const abs = resolve(ROOT, entry);
  await esbuild.build({ ...options, entryPoints: { worker: abs }, outdir, plugins: [throughCore((p) => p === abs, keys)] });
  const inCore = await buildCore(esbuild, options, outdir, keys);
  return { keys, inCore, options, outdir };
}

/**
 * Builds `extension.js` (from `entry`, with `external`) beside a worker built by `buildWorker`:
 * whatever it imports that core.js holds comes from core.js (which gets the loaders it needs).
 */
export async function buildExtension(esbuild, worker, entry, external) {
  const wanted = new Set();
  await esbuild.build({
    ...worker.options,
    entryPoints: { extension: resolve(ROOT, entry) },
    outdir: worker.outdir,
    external,
    plugins: [throughCore((p) => !worker.inCore.has(keyOf(p)), wanted)],
  });
  const missing = [...wanted].filter((k) => !worker.keys.has(k));
  if (missing.length === 0) return;
  const keys = new Set([...worker.keys, ...missing]);
  const inCore = await buildCore(esbuild, worker.options, worker.outdir, keys);
  // New loaders only name modules core.js already held: the worker's modules stay the same.
  const grown = [...inCore].filter((k) => !worker.inCore.has(k));
  if (grown.length > 0) throw new Error(`build: core.js grew with the extension's loaders: ${grown.slice(0, 5).join(', ')}`);
}
