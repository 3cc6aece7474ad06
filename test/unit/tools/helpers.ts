import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LockManager } from '../../../src/core/locks/lockManager';
import type { ToolContext } from '../../../src/core/tools/types';

/** A fresh real directory under the OS temp dir; `cleanup` removes it. */
export function makeTempDir(prefix = 'keel-tools-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestContext extends ToolContext {
  readonly output: string[];
  readonly controller: AbortController;
}

/** A real ToolContext over `workspace`, with its own LockManager and abort controller. */
export function makeContext(workspace: string, overrides: Partial<ToolContext> = {}): TestContext {
  const controller = new AbortController();
  const output: string[] = [];
  return {
    taskId: 'task-test',
    workspace,
    signal: controller.signal,
    locks: new LockManager(),
    onOutput: (chunk) => output.push(chunk),
    // No permission engine here: nothing to skip (tests of the engine's exclusions pass their own).
    searchExclusions: async () => null,
    ...overrides,
    output,
    controller,
  };
}

/** True while `pid` is a live process (a zombie counts as dead: it no longer runs). */
export function isAlive(pid: number): boolean {
  const statPath = `/proc/${pid}/stat`;
  if (!existsSync(statPath)) return false;
  try {
    const stat = readFileSync(statPath, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls until `check` returns true; rejects after `attempts` polls so a broken test ends. */
export async function waitFor(check: () => boolean, what: string, attempts = 500, intervalMs = 20): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Kills `pid` if it is still alive (test cleanup; ignores errors). */
export function killIfAlive(pid: number | undefined): void {
  if (pid === undefined || !isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}
