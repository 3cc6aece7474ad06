import * as zlib from 'node:zlib';

/** Loaded by nodeModules.ts for the first compressed response. */
export { zlib };
