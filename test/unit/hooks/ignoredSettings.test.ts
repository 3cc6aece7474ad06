import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ignoredSettingsNotices } from '../../../src/core/hooks/ignoredSettings';

/** Claude Code's `model` and `statusLine` in the settings files Keel reads: one notice per file, none otherwise. */
describe('settings Keel ignores', () => {
  it('says which keys of which file are ignored, and what to do instead', () => {
    const ws = mkdtempSync(join(tmpdir(), 'keel-ignored-ws-'));
    const home = mkdtempSync(join(tmpdir(), 'keel-ignored-home-'));
    mkdirSync(join(ws, '.claude'));
    mkdirSync(join(home, '.keel'));
    writeFileSync(join(ws, '.claude', 'settings.json'), JSON.stringify({ model: 'opus', permissions: { allow: [] } }));
    writeFileSync(join(ws, '.claude', 'settings.local.json'), '{ not json');
    writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: 'x' } }));
    expect(ignoredSettingsNotices(ws, home)).toEqual([
      `${join(home, '.keel', 'settings.json')}: Keel ignores "statusLine" (Keel has no status line; the chat header and keel status show the task)`,
      '.claude/settings.json: Keel ignores "model" (choose the model with --model or the keel.model setting)',
    ]);
    expect(ignoredSettingsNotices(mkdtempSync(join(tmpdir(), 'keel-ignored-none-')), home).length).toBe(1);
  });
});
