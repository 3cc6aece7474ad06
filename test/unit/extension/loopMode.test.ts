import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatWindow } from '../../../src/extension/chatController';
import { LoopRegistry } from '../../../src/extension/loops/loopRegistry';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import { fakeHost, MemoryLogger } from './fakes';

/**
 * "Keel: Start Loop" takes the chat's mode (docs/loop.md, "In VS Code"): never Plan mode (every
 * change of every iteration would be refused, and the loop would look complete), and the mode it
 * started with stays the loop's while the chat's mode changes.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function windowIn(mode: { now: PermissionMode }) {
  const h = fakeHost();
  const window = new ChatWindow({ ...h.host, permissionMode: () => mode.now });
  const workspace = mkdtempSync(join(tmpdir(), 'keel-loop-mode-'));
  dirs.push(workspace);
  const registry = new LoopRegistry({ workspace, taskHost: () => window.loopHost(), feed: () => undefined, owner: 'test', log: new MemoryLogger(), confirm: async () => false });
  return { h, window, registry, workspace };
}

describe("a loop and the chat's mode", () => {
  it('Plan mode: Start Loop is refused with a reason, and no loop is created', async () => {
    const mode = { now: 'plan' as PermissionMode };
    const { window, registry, workspace } = windowIn(mode);
    expect(window.loopModeProblem()).toMatch(/^a loop cannot run in Plan \(read-only\) mode: .*Switch the chat to another mode/);
    await expect(registry.start('make every test pass', { maxIterations: 3, stopWord: 'DONE', checkpoints: false })).rejects.toThrow(/cannot run in Plan/);
    expect(existsSync(join(workspace, '.keel', 'loop'))).toBe(false);
  });

  it("the iterations run in the mode the loop started in, whatever the chat's mode becomes", async () => {
    const mode = { now: 'acceptEdits' as PermissionMode };
    const { h, window } = windowIn(mode);
    expect(window.loopModeProblem()).toBeUndefined();
    const host = await window.loopHost();
    mode.now = 'plan';
    host.startIteration('iteration 1', { loopName: 'l', iteration: 1, progressFile: '/w/.keel/loop/l/progress.md' });
    expect(h.runtime.tasks.map((t) => t.options.mode)).toEqual(['acceptEdits']);
    // Continuing it now, in Plan mode, is refused like a start.
    await expect(window.loopHost()).rejects.toThrow(/cannot run in Plan/);
  });
});
