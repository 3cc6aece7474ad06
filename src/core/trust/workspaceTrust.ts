import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { collectManifest, configFiles, manifestFingerprint, runningItems, type Manifest } from './manifest';
import { FileWatch } from '../permissions/settingsWatch';
import { ensureMarker, readMarker, repositoryIdentity, workspaceKey, type RepositoryIdentity } from './identity';
import type { RunFile } from './commandFiles';
import type { TrustItem, TrustView } from './items';
import { TrustStore, type WorkspaceApproval } from './store';

/**
 * The person's trust in one workspace, as every host uses it (docs/permissions.md, "Trust"): the
 * approvals of the one store (store.ts) for this workspace's path *and* repository (identity.ts),
 * gated by the host's own trust (VS Code's Restricted Mode approves nothing). Consumers ask
 * `approved(id)` through `TrustView`; hosts list `status()`, `approve()` what they showed,
 * `revoke()`, and record what Keel itself wrote (`recordOwn`: a memory the gatekeeper saved, a
 * loop's files after its iteration, an allow rule the person saved with "Always allow"), so that
 * Keel's own writes are not questions.
 */
export interface WorkspaceTrustOptions {
  workspace: string;
  /** Keel's home (`$KEEL_HOME`, `--storage`, or `~/.keel`): the approvals live in its `trust/`. */
  keelHome: string;
  /** The person's home (user settings, `~`). Default: the OS home. */
  home?: string;
  /** Keel's environment (for `.mcp.json` expansion and PATH). Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** True while the host does not trust the workspace at all (VS Code's Restricted Mode). */
  restricted?: () => boolean;
}

export interface TrustStatus {
  manifest: Manifest;
  /** Approved in exactly their current form. */
  approved: TrustItem[];
  /** New, or changed since they were approved: held back until approved. */
  pending: TrustItem[];
  /** Never approvable (Keel cannot tell what they run). */
  blocked: TrustItem[];
  restricted: boolean;
  /** An approval exists for this path, but for another repository (or a replaced one). */
  otherRepository: boolean;
  /** The person declined exactly this pending set (not asked again until it changes). */
  declined: boolean;
  /** Ids among `pending` that were approved in another form (changed since), the others are new. */
  changed: Set<string>;
}

export class WorkspaceTrust implements TrustView {
  readonly key: string;
  readonly store: TrustStore;
  private identity: RepositoryIdentity | null = null;
  private identityAt = -1;
  private recordCache: { version: number; rec: WorkspaceApproval | undefined } | null = null;
  private restrictedSeen: boolean;
  private readonly listeners = new Set<() => void>();
  private readonly heldListeners = new Set<(items: TrustItem[]) => void>();
  private readonly reported = new Set<string>();
  private readonly unsubscribe: () => void;
  private protectedCache: { version: number; files: Map<string, string> } | null = null;
  private configWatch: FileWatch | null = null;

  constructor(private readonly opts: WorkspaceTrustOptions) {
    this.key = workspaceKey(opts.workspace);
    this.store = new TrustStore(opts.keelHome);
    this.restrictedSeen = this.restricted();
    this.unsubscribe = this.store.subscribe(() => this.emit());
  }

  approves(item: Pick<TrustItem, 'id' | 'fingerprint'>): boolean {
    if (this.restricted()) return false;
    return this.record()?.items[item.id]?.fingerprint === item.fingerprint;
  }

  /** Every approval in force (id → fingerprint): what a host sends a worker. Empty in Restricted Mode. */
  snapshot(): Record<string, string> {
    if (this.restricted()) return {};
    return Object.fromEntries(Object.entries(this.record()?.items ?? {}).map(([id, i]) => [id, i.fingerprint]));
  }

  version(): number {
    return this.store.version() * 2 + (this.restricted() ? 1 : 0);
  }

  /** What the workspace provides now, read fresh. */
  manifest(): Manifest {
    return collectManifest({ workspace: this.opts.workspace, keelHome: this.opts.keelHome, home: this.opts.home ?? homedir(), env: this.opts.env ?? process.env });
  }

  status(manifest: Manifest = this.manifest()): TrustStatus {
    const rec = this.record();
    const stored = this.store.workspace(this.key);
    const restricted = this.restricted();
    const approved: TrustItem[] = [];
    const pending: TrustItem[] = [];
    const blocked: TrustItem[] = [];
    for (const item of manifest.items) {
      if (item.blocked?.length) blocked.push(item);
      else if (!restricted && rec?.items[item.id]?.fingerprint === item.fingerprint) approved.push(item);
      else pending.push(item);
    }
    const declinedFp = pending.length ? manifestFingerprint(pending) : '';
    const changed = new Set(pending.filter((i) => rec?.items[i.id] !== undefined).map((i) => i.id));
    return { manifest, approved, pending, blocked, restricted, otherRepository: stored !== undefined && rec === undefined, declined: declinedFp !== '' && rec?.declined === declinedFp, changed };
  }

  /**
   * Approves every approvable item of `manifest` (what the person was shown), replacing the
   * previous approval of this workspace (items no longer there are forgotten). With
   * `expected`, refuses (returns null) when the workspace changed since the person looked.
   * Throws on I/O errors; refuses in Restricted Mode.
   */
  async approve(manifest: Manifest = this.manifest(), expected?: string): Promise<TrustItem[] | null> {
    if (this.restricted()) throw new Error('this workspace is in Restricted Mode: trust it in VS Code first');
    if (expected !== undefined && expected !== manifest.fingerprint) return null;
    const items = manifest.items.filter((i) => !i.blocked?.length);
    const identity = this.currentIdentity(true);
    const marker = ensureMarker(identity);
    const at = new Date().toISOString();
    await this.store.update((file) => {
      file.workspaces[this.key] = {
        stamp: identity.stamp,
        marker,
        approvedAt: at,
        items: Object.fromEntries(items.map((i) => [i.id, { kind: i.kind, fingerprint: i.fingerprint, summary: i.summary, at }])),
      };
    });
    return items;
  }

  /**
   * Records items Keel itself just wrote as approved in their current form (a saved memory, a
   * loop's files after an iteration, a rule saved by "Always allow"), keeping the others. Creates
   * the workspace's record when there is none. Throws on I/O errors; does nothing in Restricted Mode.
   */
  async recordOwn(items: readonly TrustItem[]): Promise<void> {
    if (items.length === 0 || this.restricted()) return;
    const identity = this.currentIdentity(true);
    const at = new Date().toISOString();
    await this.store.update((file) => {
      let rec = file.workspaces[this.key];
      if (!rec || !this.matches(rec, identity)) rec = file.workspaces[this.key] = { stamp: identity.stamp, marker: ensureMarker(identity), approvedAt: at, items: {} };
      for (const i of items) rec.items[i.id] = { kind: i.kind, fingerprint: i.fingerprint, summary: i.summary, at };
    });
  }

  /** Remembers that the person declined exactly this pending set. Throws on I/O errors. */
  async decline(status: TrustStatus): Promise<void> {
    if (status.pending.length === 0) return;
    const fp = manifestFingerprint(status.pending);
    const identity = this.currentIdentity(true);
    await this.store.update((file) => {
      let rec = file.workspaces[this.key];
      if (!rec || !this.matches(rec, identity)) rec = file.workspaces[this.key] = { stamp: identity.stamp, marker: readMarker(identity), approvedAt: new Date().toISOString(), items: {} };
      rec.declined = fp;
    });
  }

  /** Forgets the approval of `ids` (all of this workspace's when omitted). Returns how many were forgotten. */
  async revoke(ids?: readonly string[]): Promise<number> {
    let n = 0;
    await this.store.update((file) => {
      const rec = file.workspaces[this.key];
      if (!rec) return;
      if (!ids) {
        n = Object.keys(rec.items).length;
        delete file.workspaces[this.key];
        return;
      }
      for (const id of ids) {
        if (!(id in rec.items)) continue;
        delete rec.items[id];
        n++;
      }
      delete rec.declined;
    });
    return n;
  }

  /**
   * The files the workspace's hooks and MCP servers run, inside it (approved or not): a model's
   * write to one asks in every mode. Path → reason.
   */
  protectedFiles(manifest: Manifest = this.manifest()): Map<string, string> {
    return protectedFilesOf(manifest.items);
  }

  /**
   * A consumer held these items back just now (a hook that did not run, an instructions file left
   * out): the host tells the person (each item and content once per process). Never throws.
   */
  reportHeld(items: readonly TrustItem[]): void {
    const fresh = items.filter((i) => !this.reported.has(`${i.id}:${i.fingerprint}`));
    if (fresh.length === 0) return;
    for (const i of fresh) this.reported.add(`${i.id}:${i.fingerprint}`);
    for (const l of [...this.heldListeners]) {
      try {
        l(fresh);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Counts these items as already told to the person (a host listed them itself). */
  markReported(items: readonly TrustItem[]): void {
    for (const i of items) this.reported.add(`${i.id}:${i.fingerprint}`);
  }

  /** Calls `listener` with items a consumer held back (see `reportHeld`). */
  onHeld(listener: (items: TrustItem[]) => void): () => void {
    this.heldListeners.add(listener);
    return () => this.heldListeners.delete(listener);
  }

  /**
   * The files the workspace's hooks and MCP servers run (`protectedFiles`), kept until their
   * configuration files or the approvals change: read on every permission decision.
   */
  protectedFilesNow(): ReadonlyMap<string, string> {
    const files = configFiles(this.opts.workspace, this.opts.home ?? homedir());
    // Where watching fails, the files' identities decide (as the settings' stamp does).
    this.configWatch ??= new FileWatch(files, () => files.map(statStamp).join('|'));
    const changed = this.configWatch.changed();
    const version = this.store.version();
    if (!this.protectedCache || changed || this.protectedCache.version !== version) {
      const items = runningItems({ workspace: this.opts.workspace, keelHome: this.opts.keelHome, home: this.opts.home ?? homedir(), env: this.opts.env ?? process.env });
      this.protectedCache = { version, files: protectedFilesOf(items) };
    }
    return this.protectedCache.files;
  }

  /** Calls `listener` when approvals change (any process) or the host's trust changes. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The host's trust changed (VS Code granted trust): tell the subscribers. */
  hostTrustChanged(): void {
    const now = this.restricted();
    if (now === this.restrictedSeen) return;
    this.restrictedSeen = now;
    this.emit();
  }

  dispose(): void {
    this.unsubscribe();
    this.listeners.clear();
    this.heldListeners.clear();
    this.configWatch?.dispose();
    this.store.dispose();
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

  private restricted(): boolean {
    return this.opts.restricted?.() ?? false;
  }

  /** This workspace's approval, when it was given to the repository that is there now. */
  private record(): WorkspaceApproval | undefined {
    const version = this.store.version();
    if (this.recordCache?.version === version) return this.recordCache.rec;
    const stored = this.store.workspace(this.key);
    const rec = stored && this.matches(stored, this.currentIdentity(false)) ? stored : undefined;
    this.recordCache = { version, rec };
    return rec;
  }

  private matches(rec: WorkspaceApproval, identity: RepositoryIdentity): boolean {
    if (rec.stamp !== identity.stamp) return false;
    return rec.marker === null || readMarker(identity) === rec.marker;
  }

  /** The repository identity, taken again whenever the approvals changed (or when `fresh`). */
  private currentIdentity(fresh: boolean): RepositoryIdentity {
    const v = this.store.version();
    if (fresh || !this.identity || this.identityAt !== v) {
      this.identity = repositoryIdentity(this.opts.workspace);
      this.identityAt = v;
    }
    return this.identity;
  }
}

/** Files that hooks and MCP servers among `items` run from the workspace: path → reason. */
export function protectedFilesOf(items: readonly TrustItem[]): Map<string, string> {
  const out = new Map<string, string>();
  const add = (f: RunFile, what: string) => {
    if (!f.inWorkspace || f.part) return;
    const why = `writes ${f.display}, which a ${what} of this workspace runs (its approval covers this content)`;
    out.set(f.path, why);
    out.set(realOf(f.path), why);
  };
  for (const i of items) for (const f of i.runs ?? []) add(f, i.kind === 'hook' ? 'hook' : 'MCP server');
  return out;
}

/** Where a path leads now (itself when it does not exist). */
function realOf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** A file's identity for change detection (inode, size, times), or `-` when it is not there. */
function statStamp(p: string): string {
  try {
    const st = statSync(p);
    return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return '-';
  }
}
