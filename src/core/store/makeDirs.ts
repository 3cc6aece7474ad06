import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Creates `dir` and whatever parents are missing, one level at a time, each with `mode` (before
 * the umask; Keel's store folders pass PRIVATE_DIR), and throws the first failure (ENOENT,
 * ENOTDIR, EACCES, EROFS…) with the path it failed on. Never loops: Node's recursive mkdir retries
 * for ever where mkdir answers ENOENT for a parent that exists (any path under /proc), spinning a
 * CPU and starving the signal handlers.
 */
export function makeDirs(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let p = resolve(dir); ; ) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(p);
      const parent = dirname(p);
      if (parent === p) throw err;
      p = parent;
      continue;
    }
    if (!isDir) throw Object.assign(new Error(`ENOTDIR: not a directory, '${p}'`), { code: 'ENOTDIR', path: p });
    break;
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p, mode);
    } catch (err) {
      // Made by someone else meanwhile: fine if it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(p).isDirectory()) throw err;
    }
  }
}

/** Throws unless a file can be created (and removed) in the folder `dir`. */
export function probeWritable(dir: string): void {
  const probe = join(dir, `.keel-probe-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  writeFileSync(probe, '', { mode: 0o600 });
  rmSync(probe, { force: true });
}
