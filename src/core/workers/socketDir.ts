import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a pool's workers connect: a folder only this user can enter (0700), made fresh per pool,
 * holding one socket per worker. On Windows the sockets are named pipes, which have no folder;
 * their names carry a random part instead.
 */
export class SocketDir {
  readonly path: string;
  private readonly pipePrefix: string;

  constructor(base: string = tmpdir()) {
    this.path = mkdtempSync(join(base, 'keel-workers-'));
    chmodSync(this.path, 0o700);
    const mode = statSync(this.path).mode & 0o777;
    if (process.platform !== 'win32' && mode !== 0o700) throw new Error(`the worker socket folder ${this.path} has mode ${mode.toString(8)}, not 700`);
    this.pipePrefix = `\\\\.\\pipe\\keel-${randomBytes(8).toString('hex')}-`;
  }

  /** The address a worker with this id listens for (a socket file, or a pipe name on Windows). */
  socketFor(workerId: string): string {
    const safe = workerId.replace(/[^A-Za-z0-9_-]/g, '_');
    return process.platform === 'win32' ? `${this.pipePrefix}${safe}` : join(this.path, `${safe}.sock`);
  }

  /** Removes the folder and whatever sockets are left in it. Idempotent; never throws. */
  remove(): void {
    try {
      rmSync(this.path, { recursive: true, force: true });
    } catch {
      // A folder in tmp that could not be removed is harmless (0700, empty sockets).
    }
  }
}
