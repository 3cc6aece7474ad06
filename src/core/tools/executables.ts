import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

/** True when `file` exists, is a regular file and is executable by this process. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds `name` on `searchPath` (default: `process.env.PATH`), the way a shell would.
 * Returns the absolute path of the first executable match, or undefined. Never throws.
 */
export function findOnPath(name: string, searchPath: string | undefined = process.env.PATH): string | undefined {
  if (!searchPath) return undefined;
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}
