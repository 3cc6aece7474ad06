import * as path from 'node:path';

/**
 * Resolves a tool's path argument: absolute paths are kept, relative ones resolve against the
 * workspace. The result is normalised (no `..` segments) and always absolute.
 */
export function resolveToolPath(workspace: string, p: string): string {
  return path.resolve(workspace, p);
}

/** The path as people read it: relative to the workspace when inside it, else absolute. */
export function displayPath(workspace: string, abs: string): string {
  const rel = path.relative(workspace, abs);
  if (rel === '') return '.';
  if (rel.startsWith('..') || path.isAbsolute(rel)) return abs;
  return rel;
}

/** The Node error code (`ENOENT`, `EISDIR`…) of a thrown value, if any. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
