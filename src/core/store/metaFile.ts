import { readFileSync } from 'node:fs';
import { migrator, MIGRATIONS, type MigrationTable } from './migrations';
import type { ReplayedTask } from './replay';
import { SCHEMA_VERSION, type LogHeader, type TaskMeta } from './types';

const STATUSES = new Set(['running', 'completed', 'interrupted', 'failed', 'aborted']);

/**
 * Reads and checks a meta.json, upgrading an older schema version. Returns null when the file is
 * missing, not JSON or not a meta record (the caller rebuilds it from the log). Throws
 * StoreError('unsupported') for a newer schema version.
 */
export function readMeta(path: string, table: MigrationTable = MIGRATIONS): TaskMeta | null {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const version = (value as { schemaVersion?: unknown }).schemaVersion;
  if (typeof version !== 'number') return null;
  const up = migrator('meta', version, table);
  const m = (up ? up(value) : value) as Partial<TaskMeta>;
  if (typeof m.id !== 'string' || typeof m.title !== 'string' || !STATUSES.has(String(m.status))) return null;
  if (typeof m.createdAt !== 'number' || typeof m.updatedAt !== 'number') return null;
  return {
    schemaVersion: SCHEMA_VERSION,
    id: m.id,
    title: m.title,
    status: m.status as TaskMeta['status'],
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    tokens: Number(m.tokens) || 0,
    costUsd: Number(m.costUsd) || 0,
    model: String(m.model ?? ''),
    ...(m.provider ? { provider: String(m.provider) } : {}),
    workspace: String(m.workspace ?? ''),
    ...(m.parentId ? { parentId: String(m.parentId) } : {}),
    ...(m.recordError ? { recordError: String(m.recordError) } : {}),
  };
}

/** Meta rebuilt from a log: what a missing or damaged meta.json is replaced with. */
export function metaFromLog(header: LogHeader, replay: ReplayedTask): TaskMeta {
  return {
    schemaVersion: SCHEMA_VERSION,
    id: header.taskId,
    title: replay.transcript.title || header.title || 'Untitled task',
    status: replay.status,
    createdAt: header.createdAt,
    updatedAt: Math.max(header.createdAt, replay.lastAt),
    tokens: replay.tokens,
    costUsd: replay.costUsd,
    model: header.model ?? replay.transcript.model,
    workspace: header.workspace ?? '',
    ...(header.parentId ? { parentId: header.parentId } : {}),
  };
}
