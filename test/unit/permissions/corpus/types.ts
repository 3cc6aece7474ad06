import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';

/** The three answers of the engine. */
export type Decision = 'allow' | 'ask' | 'deny';

/**
 * Proof that a case is a real hole (or a real harmless command): the command is run in real bash
 * inside a throwaway copy of the fixture, in a bubblewrap sandbox where only that copy is
 * writable and there is no network (see realBash.ts). `setup` runs first, in the copy's
 * workspace; `proves` runs afterwards and must exit 0 — e.g. `test ! -e src` after a command
 * the engine must not allow because it deletes `src`.
 */
export interface RealBashCheck {
  setup?: string;
  proves: string;
}

export interface BashCase {
  /** The root cause the case belongs to (e.g. `wrapper-options`, `readonly-flags`, `paths`). */
  group: string;
  command: string;
  expect: Decision;
  /** Default: `default`. */
  mode?: PermissionMode;
  realBash?: RealBashCheck;
  note?: string;
}

export interface ToolCase {
  group: string;
  tool: string;
  input: Record<string, unknown>;
  expect: Decision;
  mode?: PermissionMode;
}

export interface DomainCase {
  group: string;
  url: string;
  expect: Decision;
}

/**
 * One file of the corpus. Every group gets its own fixture (fixture.ts): `settings` replaces
 * CORPUS_SETTINGS when given (e.g. no rules at all, to test the read-only allowlist), and
 * `prepare` arranges extra files or symlinks in it before any case runs.
 */
export interface CorpusGroup {
  name: string;
  settings?: unknown;
  /** Files (relative to the workspace) the engine is told to protect (EngineOptions.protectedFiles). */
  protectedFiles?: string[];
  prepare?(fx: PermissionFixture): void;
  bash?: BashCase[];
  tools?: ToolCase[];
  domains?: DomainCase[];
}
