/**
 * Checkpoints, rewinds and forks as views and the CLI see them (docs/persistence.md,
 * "Checkpoints"). The store itself is src/core/checkpoints.
 */

/** What a rewind puts back: the files, the conversation, or both. */
export type RewindScope = 'both' | 'files' | 'conversation';

/** A rewind or fork as the log's `rewind` event and the chat's `rewind` item both carry it. */
export interface RewindRecord {
  id: string;
  action: 'rewind' | 'fork';
  step: number;
  stepId: string;
  scope: RewindScope;
  /** One line for people: "Rewound to before step 4 (Edit src/a.ts)". */
  label: string;
  files: RewoundFile[];
  forkedFrom?: { taskId: string; step: number };
  forkedTo?: string;
}

/** One file a tool call's checkpoint covered: kept (restorable), or not and why. */
export interface CheckpointFileNote {
  /** Workspace-relative (`/`-separated), or absolute for a file outside the workspace. */
  path: string;
  kept: boolean;
  reason?: string;
}

/** What a rewind did to one file. */
export interface RewoundFile {
  path: string;
  /**
   * `restored`: written back; `removed`: it did not exist then and was deleted; `keptYours`: it
   * was changed since Keel last wrote it and the person kept their version; `notRestorable`: no
   * earlier content was kept (`reason` says why).
   */
  outcome: 'restored' | 'removed' | 'keptYours' | 'notRestorable';
  reason?: string;
}

/** Steps that can be rewound to, as `keel tasks checkpoints` numbers them. */
export type StepKind = 'message' | 'tool' | 'rewind';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

/** How a rewind's outcome reads in one line: "3 files restored, 1 kept as you changed it". */
export function rewoundWords(files: RewoundFile[]): string {
  const n = (o: RewoundFile['outcome']) => files.filter((f) => f.outcome === o).length;
  const parts: string[] = [];
  const restored = n('restored') + n('removed');
  if (restored) parts.push(`${restored} file${restored === 1 ? '' : 's'} restored`);
  if (n('keptYours')) parts.push(`${n('keptYours')} kept as you changed ${n('keptYours') === 1 ? 'it' : 'them'}`);
  if (n('notRestorable')) parts.push(`${n('notRestorable')} not restorable`);
  return parts.join(', ') || 'no file changes';
}
