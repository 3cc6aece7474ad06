import { chmodSync, existsSync, mkdirSync, readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { writeFileAtomicSync } from '../store/atomicFile';

/**
 * The one approval store for everything workspaces provide (docs/permissions.md, "Trust"):
 * `<keel home>/trust/approvals.json`, in a 0700 folder, the file 0600 (both tightened when found
 * looser), outside every repository so that no repository can approve itself. It replaces
 * `hook-approvals.json` and `mcp-approvals.json`, which held approvals of command text only and
 * are not carried over: each workspace is asked once more, this time about content.
 *
 * Per workspace (its real path): the repository identity the approval was given to
 * (identity.ts), and each approved item's id and content fingerprint (items.ts). `declined` is
 * the fingerprint of the pending set the person last declined (not asked again until it changes).
 *
 * Reads never throw (a missing or unreadable file approves nothing) and are cached until the file
 * changes (watched; other processes' approvals are noticed); writes go under a lock, atomically,
 * and throw on I/O errors.
 */
const itemSchema = z.object({ kind: z.string(), fingerprint: z.string(), summary: z.string(), at: z.string() });
const workspaceSchema = z.object({
  stamp: z.string(),
  marker: z.string().nullable(),
  approvedAt: z.string(),
  items: z.record(z.string(), itemSchema),
  declined: z.string().optional(),
});
const fileSchema = z.object({ version: z.literal(1), workspaces: z.record(z.string(), workspaceSchema) });

export type ApprovedItem = z.infer<typeof itemSchema>;
export type WorkspaceApproval = z.infer<typeof workspaceSchema>;
export type ApprovalFile = z.infer<typeof fileSchema>;

export function trustDir(keelHome: string): string {
  return join(keelHome, 'trust');
}

export function approvalsFile(keelHome: string): string {
  return join(trustDir(keelHome), 'approvals.json');
}

const EMPTY = (): ApprovalFile => ({ version: 1, workspaces: {} });

export class TrustStore {
  readonly path: string;
  private cache: { text: string; file: ApprovalFile } | null = null;
  private dirty = true;
  private generation = 0;
  private watcher: FSWatcher | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(readonly keelHome: string) {
    this.path = approvalsFile(keelHome);
    this.ensurePrivate();
    this.watch();
  }

  /** Increases whenever the approvals change (here or in another process, once its write is seen). */
  version(): number {
    this.read();
    return this.generation;
  }

  /** The approvals as they are now. */
  read(): ApprovalFile {
    if (!this.dirty && this.cache) return this.cache.file;
    this.dirty = this.watcher === null;
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      text = '';
    }
    if (this.cache && this.cache.text === text) return this.cache.file;
    let file = EMPTY();
    try {
      const parsed = fileSchema.safeParse(JSON.parse(text));
      if (parsed.success) file = parsed.data;
    } catch {
      // Missing or not JSON: nothing is approved.
    }
    this.cache = { text, file };
    this.generation++;
    return file;
  }

  /** The record of one workspace (by key), if any. */
  workspace(key: string): WorkspaceApproval | undefined {
    return this.read().workspaces[key];
  }

  /** Changes the file under a lock (read, `change`, atomic write). Throws on I/O errors. */
  async update(change: (file: ApprovalFile) => void): Promise<void> {
    this.ensurePrivate();
    try {
      // The lock needs the file; `wx` leaves one another process just made alone.
      if (!existsSync(this.path)) writeFileSync(this.path, `${JSON.stringify(EMPTY())}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const release = await lockfile.lock(this.path, { retries: { retries: 40, minTimeout: 10, maxTimeout: 200 }, stale: 10_000 });
    try {
      this.dirty = true;
      const file = structuredClone(this.read());
      change(file);
      writeFileAtomicSync(this.path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
      chmodSync(this.path, 0o600);
      this.dirty = true;
      this.read();
    } finally {
      await release();
    }
    this.emit();
  }

  /** Calls `listener` after the approvals changed. Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  dispose(): void {
    this.watcher?.close();
    this.watcher = null;
    this.listeners.clear();
  }

  private emit(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** The folder 0700 and the file 0600, tightened when they exist looser. Never throws. */
  private ensurePrivate(): void {
    const dir = trustDir(this.keelHome);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      if (existsSync(this.path)) chmodSync(this.path, 0o600);
    } catch {
      // A read-only home: reads still work, writes will say why they failed.
    }
  }

  private watch(): void {
    try {
      this.watcher = watch(trustDir(this.keelHome), { persistent: false }, (_event, name) => {
        if (name !== null && !String(name).startsWith('approvals.json')) return;
        const before = this.generation;
        this.dirty = true;
        this.read();
        if (this.generation !== before) this.emit();
      });
      this.watcher.on('error', () => {
        // Watching stopped (the folder went away): read the file every time from now on.
        this.watcher = null;
        this.dirty = true;
      });
    } catch {
      this.watcher = null;
    }
  }
}
