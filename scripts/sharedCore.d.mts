import type * as esbuild from 'esbuild';

/** What `buildWorker` built, for `buildExtension`. */
export interface BuiltWorker {
  keys: Set<string>;
  inCore: Set<string>;
  options: esbuild.BuildOptions;
  outdir: string;
}

export function buildWorker(build: typeof esbuild, options: esbuild.BuildOptions, outdir: string, entry: string): Promise<BuiltWorker>;
export function buildExtension(build: typeof esbuild, worker: BuiltWorker, entry: string, external: string[]): Promise<void>;
