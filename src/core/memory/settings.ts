/**
 * Whether memory is on for a run and whether the gatekeeper may save lessons. In VS Code:
 * `keel.memory.enabled` and `keel.memory.autoSave`; for one CLI run: `--no-memory` or the
 * environment variable `KEEL_MEMORY=off` (also `0`, `false`, `no`).
 */
export interface MemorySettings {
  /** Search memories into the context and consider saving new ones. */
  enabled: boolean;
  /** Let the gatekeeper save what a run learned (one short model call per successful run). */
  autoSave: boolean;
  /** At most this many tokens of memories in a run's context. */
  maxTokens?: number;
}

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = { enabled: true, autoSave: true };

/** `KEEL_MEMORY` says off: `off`, `0`, `false`, `no` (any case). */
export function memoryOffByEnv(env: NodeJS.ProcessEnv): boolean {
  return /^(off|0|false|no)$/i.test((env.KEEL_MEMORY ?? '').trim());
}

/** Memory off: no search, no lessons (a host that did not ask for memory). */
export const MEMORY_OFF: MemorySettings = { enabled: false, autoSave: false };
