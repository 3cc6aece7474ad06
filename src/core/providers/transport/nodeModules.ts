/**
 * The Node modules `nodeFetch` needs, each behind a bundled module of its own so that a worker
 * loads it on first use: `await import('node:https')` would stay a real dynamic import in the
 * CommonJS bundle, and the first one loads Node's whole ESM loader (~2 MB resident); a bundled
 * module imported with `await import()` is only run then (esbuild), its `require` with it.
 */
export async function httpModule(secure: boolean): Promise<typeof import('node:http') | typeof import('node:https')> {
  return secure ? (await import('./httpsModule')).https : (await import('./httpModule')).http;
}

export async function zlibModule(): Promise<typeof import('node:zlib')> {
  return (await import('./zlibModule')).zlib;
}
