import fc from 'fast-check';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atLeastAsStrict, settleDefaultMode, type ModeRequest } from '../../../src/core/permissions/defaultMode';
import { settingsDefaultMode } from '../../../src/core/permissions/settings';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';
import { defaultModeSetting } from '../../../src/extension/providerConfig';
import { PERMISSION_MODES, type PermissionMode } from '../../../src/shared/domain/permissionModes';

/**
 * The starting mode from the settings files' `defaultMode` (docs/permissions.md, "The starting
 * mode"): the user's file may set any mode; a workspace file (it comes with the repository) may
 * only make it stricter; an explicit choice wins.
 */
const mode = fc.constantFrom(...PERMISSION_MODES);
const request = fc.record({ mode, scope: fc.constantFrom('user' as const, 'project' as const, 'local' as const), path: fc.constantFrom('/u/.keel/settings.json', '/w/.claude/settings.json', '/w/.keel/settings.local.json') });

describe('which modes are stricter', () => {
  it('orders what each mode lets through; plan and dontAsk are incomparable', () => {
    const chain: PermissionMode[] = ['bypassPermissions', 'acceptEdits', 'default', 'plan'];
    for (let i = 0; i < chain.length; i++) for (let j = 0; j < chain.length; j++) expect(atLeastAsStrict(chain[i]!, chain[j]!)).toBe(i >= j);
    expect(atLeastAsStrict('dontAsk', 'default')).toBe(true);
    expect(atLeastAsStrict('dontAsk', 'acceptEdits')).toBe(true);
    expect(atLeastAsStrict('default', 'dontAsk')).toBe(false);
    expect(atLeastAsStrict('plan', 'dontAsk')).toBe(false);
    expect(atLeastAsStrict('dontAsk', 'plan')).toBe(false);
  });
});

describe('settleDefaultMode', () => {
  it('property: a workspace file never loosens the mode the user file (or default) gives', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 8 }), (requests: ModeRequest[]) => {
        const { mode: settled, notices } = settleDefaultMode(requests);
        const users = requests.filter((r) => r.scope === 'user');
        const base = users.at(-1)?.mode ?? 'default';
        const workspace = requests.filter((r) => r.scope !== 'user');
        // Never looser than the user's own choice.
        expect(atLeastAsStrict(settled ?? 'default', base)).toBe(true);
        // With no workspace file, the user's file decides.
        if (workspace.length === 0) expect(settled).toBe(users.at(-1)?.mode);
        // Whatever a workspace file asked that is not at least as strict as the user's choice was ignored, and said so.
        for (const r of workspace) if (!atLeastAsStrict(r.mode, base)) expect(notices.some((n) => n.startsWith(`${r.path}: defaultMode "${r.mode}" ignored`))).toBe(true);
        // Notices are only about workspace files, at most one per request.
        expect(notices.length).toBeLessThanOrEqual(workspace.length);
        for (const n of notices) expect(workspace.some((r) => n.startsWith(`${r.path}: defaultMode "${r.mode}" ignored`))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('property: a stricter workspace mode applies', () => {
    fc.assert(
      fc.property(fc.option(mode, { nil: undefined }), mode, (user, project) => {
        const requests: ModeRequest[] = [...(user ? [{ mode: user, scope: 'user' as const, path: 'u' }] : []), { mode: project, scope: 'project', path: 'p' }];
        const { mode: settled, notices } = settleDefaultMode(requests);
        if (atLeastAsStrict(project, user ?? 'default')) {
          expect(settled).toBe(project);
          expect(notices).toEqual([]);
        } else {
          expect(settled).toBe(user);
          expect(notices).toHaveLength(1);
        }
      }),
    );
  });
});

describe('settingsDefaultMode over real files', () => {
  function setup(files: { user?: PermissionMode | string; project?: PermissionMode | string; local?: PermissionMode | string }) {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-defaultmode-ws-'));
    const home = mkdtempSync(join(tmpdir(), 'keel-defaultmode-home-'));
    const write = (path: string, m: string | undefined) => {
      if (m === undefined) return;
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, JSON.stringify({ permissions: { defaultMode: m } }));
    };
    write(join(home, '.keel', 'settings.json'), files.user);
    write(join(workspace, '.claude', 'settings.json'), files.project);
    write(join(workspace, '.keel', 'settings.local.json'), files.local);
    return settingsDefaultMode(workspace, NOTHING_APPROVED, { home });
  }

  it.each([
    [{ user: 'acceptEdits' }, 'acceptEdits', 0],
    [{ user: 'bypassPermissions' }, 'bypassPermissions', 0],
    [{ project: 'plan' }, 'plan', 0],
    [{ user: 'acceptEdits', project: 'default' }, 'default', 0],
    [{ user: 'acceptEdits', local: 'dontAsk' }, 'dontAsk', 0],
    [{ project: 'bypassPermissions' }, undefined, 1],
    [{ local: 'acceptEdits' }, undefined, 1],
    [{ user: 'plan', project: 'acceptEdits' }, 'plan', 1],
    [{ user: 'plan', local: 'dontAsk' }, 'plan', 1],
    [{ project: 'plan', local: 'bypassPermissions' }, 'plan', 1],
    [{ project: 'yolo' }, undefined, 1],
  ] as const)('%j → %s (%i notices)', (files, expected, noticeCount) => {
    const r = setup(files);
    expect(r.mode).toBe(expected);
    expect(r.notices).toHaveLength(noticeCount);
  });

  it('the notice names the file and the mode it kept', () => {
    const r = setup({ user: 'default', project: 'bypassPermissions' });
    expect(r.notices[0]).toMatch(/\.claude\/settings\.json: defaultMode "bypassPermissions" ignored: a workspace settings file may only make the mode stricter than "default"/);
  });
});

describe('VS Code: keel.permissions.defaultMode', () => {
  it('the user settings\' value wins over the files; unset, the files decide; neither, the setting\'s default', () => {
    let read = 0;
    const files = (m: PermissionMode | undefined) => () => (read++, m);
    expect(defaultModeSetting({ globalValue: 'acceptEdits', defaultValue: 'default' }, files('plan'))).toBe('acceptEdits');
    expect(read).toBe(0);
    expect(defaultModeSetting({ defaultValue: 'default' }, files('plan'))).toBe('plan');
    expect(defaultModeSetting({ defaultValue: 'default' }, files(undefined))).toBe('default');
  });

  it('a workspace or folder value (.vscode/settings.json comes with the repository) may only make it stricter', () => {
    const notices: string[] = [];
    const none = () => undefined;
    expect(defaultModeSetting({ workspaceValue: 'default', globalValue: 'acceptEdits', defaultValue: 'default' }, none)).toBe('default');
    expect(defaultModeSetting({ workspaceValue: 'bypassPermissions', defaultValue: 'default' }, none, (n) => notices.push(n))).toBe('default');
    expect(defaultModeSetting({ workspaceFolderValue: 'acceptEdits', globalValue: 'default', defaultValue: 'default' }, none, (n) => notices.push(n))).toBe('default');
    expect(defaultModeSetting({ workspaceValue: 'plan', workspaceFolderValue: 'dontAsk', defaultValue: 'default' }, none, (n) => notices.push(n))).toBe('plan');
    expect(defaultModeSetting({ workspaceValue: 'nonsense', defaultValue: 'default' }, none, (n) => notices.push(n))).toBe('default');
    expect(notices).toHaveLength(4);
    expect(notices[0]).toMatch(/"bypassPermissions" in the workspace settings ignored: a workspace may only make the mode stricter than "default"/);
  });

  it('property: whatever the workspace and folder values, the mode is never looser than the user\'s choice', () => {
    const anyValue = fc.oneof(fc.constantFrom(...PERMISSION_MODES), fc.constant(undefined), fc.string());
    fc.assert(
      fc.property(fc.constantFrom(...PERMISSION_MODES), anyValue, anyValue, (user, ws, folder) => {
        const mode = defaultModeSetting({ globalValue: user, workspaceValue: ws, workspaceFolderValue: folder, defaultValue: 'default' }, () => undefined) as PermissionMode;
        expect(atLeastAsStrict(mode, user)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
