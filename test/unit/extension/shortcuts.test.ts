import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pendingFor } from '../../../src/extension/shortcutTargets';
import type { PendingPermission } from '../../../src/shared/protocol/chatMessages';

/**
 * The keyboard shortcuts a person reads in the README are the ones VS Code gets from the
 * manifest, each bound to a command the manifest contributes; the permission ones apply only
 * while a request waits, on the request the person is looking at.
 */
const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string; title: string }[]; keybindings: { command: string; key: string; mac: string; when?: string }[] };
};
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** `ctrl+shift+alt+n` as the README writes it: `Ctrl+Shift+Alt+N`. */
const shown = (key: string) =>
  key
    .split('+')
    .map((k) => (k.length === 1 ? k.toUpperCase() : k[0]!.toUpperCase() + k.slice(1)))
    .join('+');

describe('keyboard shortcuts', () => {
  it('focus, new task, allow, deny, open diff and cancel each have a default binding to a contributed command, listed in the README', () => {
    const bound = new Map(manifest.contributes.keybindings.map((k) => [k.command, k]));
    for (const command of ['keel.focusChat', 'keel.newTask', 'keel.permission.allow', 'keel.permission.deny', 'keel.openDiff', 'keel.cancelTask']) {
      const k = bound.get(command);
      expect(k, command).toBeDefined();
      const contributed = manifest.contributes.commands.find((c) => c.command === command);
      expect(contributed, command).toBeDefined();
      const row = readme.split('\n').find((l) => l.includes(`Keel: ${contributed!.title}`));
      expect(row, `README row for ${command}`).toBeDefined();
      expect(row).toContain(`\`${shown(k!.key)}\``);
      expect(row).toContain(`\`${shown(k!.mac)}\``);
    }
    // No two default bindings share a key.
    const keys = manifest.contributes.keybindings.map((k) => `${k.key}|${k.when ?? ''}`);
    expect(new Set(keys).size).toBe(keys.length);
    // The permission keys are the editor's unless a request waits.
    for (const c of ['keel.permission.allow', 'keel.permission.deny', 'keel.openDiff']) expect(bound.get(c)?.when).toBe('keel.permissionPending');
  });

  it('a permission shortcut acts on the shown task’s oldest request, else the window’s oldest; none waiting: none', () => {
    const p = (requestId: string, taskId: string): PendingPermission => ({ requestId, taskId, toolCallId: `c-${requestId}`, tool: 'Bash', input: {}, summary: 'ls', reason: 'running a command' });
    const list = [p('r1', 'a'), p('r2', 'b'), p('r3', 'b')];
    expect(pendingFor(list, 'b')?.requestId).toBe('r2');
    expect(pendingFor(list, 'c')?.requestId).toBe('r1');
    expect(pendingFor(list, undefined)?.requestId).toBe('r1');
    expect(pendingFor([], 'a')).toBeUndefined();
  });
});
