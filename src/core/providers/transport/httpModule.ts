import * as http from 'node:http';

/** Loaded by nodeModules.ts on a worker's first plain-http request. */
export { http };
