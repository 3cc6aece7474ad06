import * as https from 'node:https';

/** Loaded by nodeModules.ts on a worker's first https request (TLS with it). */
export { https };
