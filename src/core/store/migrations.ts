import { SCHEMA_VERSION, StoreError } from './types';

/**
 * The migration hook. Lines of a log written with schema version N < SCHEMA_VERSION are read
 * through the steps N→N+1, …, →SCHEMA_VERSION, one record at a time; meta.json likewise. Files
 * are never rewritten for a migration: when an old log gets new events, the writer first appends
 * a header line in the current version, and the reader switches version at every header line.
 * Version 1 is the first, so the table is empty; a step is added here whenever the format changes.
 */
export interface Migration {
  /** Upgrades one log line (the parsed JSON) from version `from` to `from + 1`. */
  record(value: unknown): unknown;
  /** Upgrades a parsed meta.json from version `from` to `from + 1`. */
  meta(value: unknown): unknown;
}

export type MigrationTable = Readonly<Record<number, Migration>>;

export const MIGRATIONS: MigrationTable = {};

/**
 * Returns a function that upgrades a value written in `from` to the current version, or throws
 * StoreError('unsupported') for a version this build cannot read (newer, or missing a step).
 */
export function migrator(kind: keyof Migration, from: number, table: MigrationTable = MIGRATIONS, to = SCHEMA_VERSION): ((value: unknown) => unknown) | null {
  if (from === to) return null;
  if (!Number.isInteger(from) || from > to || from < 1) throw new StoreError('unsupported', `schema version ${from} cannot be read by this Keel (it reads up to ${to})`);
  const steps: ((v: unknown) => unknown)[] = [];
  for (let v = from; v < to; v++) {
    const step = table[v];
    if (!step) throw new StoreError('unsupported', `no migration from schema version ${v} to ${v + 1}`);
    steps.push((x) => step[kind](x));
  }
  return (value) => steps.reduce((acc, f) => f(acc), value);
}
