import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTHING_APPROVED } from '../../../src/core/commands/projectGate';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import { composeMessage } from '../../../src/extension/composerMessage';
import { chatSlashCommands, slashInChat, type ChatCommands, type SlashSurface } from '../../../src/extension/slashChat';

/** The chat's `/` handling as the controller uses it, with a real commands folder. */
function setup() {
  const home = mkdtempSync(join(tmpdir(), 'keel-slash-home-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-slash-ws-'));
  mkdirSync(join(home, '.claude', 'commands'), { recursive: true });
  writeFileSync(join(home, '.claude', 'commands', 'review.md'), '---\ndescription: Review it\nargument-hint: [file]\nallowed-tools: Read\nmodel: haiku\n---\nReview $ARGUMENTS');
  mkdirSync(join(workspace, '.claude', 'commands'), { recursive: true });
  writeFileSync(join(workspace, '.claude', 'commands', 'ship.md'), 'Ship it');
  const commands: ChatCommands = { workspace: () => workspace, home, gate: NOTHING_APPROVED, approveHint: 'approve it first' };
  const notices: string[] = [];
  let mode: PermissionMode = 'default';
  let cleared = 0;
  const surface: SlashSurface = { current: () => undefined, newTask: () => cleared++, setMode: (m) => (mode = m), mode: () => mode, notice: (m) => notices.push(m) };
  return { commands, surface, notices, mode: () => mode, cleared: () => cleared };
}

describe('slash commands in the chat', () => {
  it('offers built-ins and the person\'s commands with their hint and source, not a workspace\'s unapproved one', () => {
    const { commands } = setup();
    const all = chatSlashCommands(commands, '', 50);
    expect(all.find((c) => c.name === 'review')).toMatchObject({ hint: '[file]', source: 'user', description: 'Review it' });
    expect(all.find((c) => c.name === 'compact')).toMatchObject({ source: 'built-in', hint: '[instructions]' });
    expect(all.some((c) => c.name === 'ship')).toBe(false);
    expect(chatSlashCommands(commands, 'rev', 50).map((c) => c.name)).toEqual(['review']);
  });

  it('expands a custom command and sends it with its allowed-tools and model', async () => {
    const { commands, surface } = setup();
    expect(await slashInChat('/review a.ts', commands, surface)).toEqual({
      kind: 'send',
      text: 'Review a.ts',
      extras: { command: { narrowing: { command: '/review', rules: ['Read'] }, model: 'haiku' } },
    });
  });

  it('the composed message of a command keeps what was typed (shown), its text is the expansion (sent); a plain one has no typed', async () => {
    const { commands, surface } = setup();
    const ctx = { runtime: () => Promise.reject(new Error('no runtime is needed')), mode: () => 'default' as const, commands, surface, error: () => undefined, closed: () => false };
    expect(await composeMessage('/review a.ts', [], ctx)).toEqual({
      kind: 'send',
      text: 'Review a.ts',
      extras: { command: { narrowing: { command: '/review', rules: ['Read'] }, model: 'haiku' }, typed: '/review a.ts' },
    });
    expect(await composeMessage('plain text', [], ctx)).toEqual({ kind: 'send', text: 'plain text', extras: {} });
  });

  it('built-ins act on the chat; a held or unknown command is a notice that keeps what was typed', async () => {
    const s = setup();
    expect(await slashInChat('/mode plan', s.commands, s.surface)).toEqual({ kind: 'handled' });
    expect(s.mode()).toBe('plan');
    await slashInChat('/clear', s.commands, s.surface);
    expect(s.cleared()).toBe(1);
    await slashInChat('/ship now', s.commands, s.surface);
    expect(s.notices.at(-1)).toMatch(/\/ship is a command of this workspace .* not approved yet; approve it first\. Nothing was sent\. You typed: \/ship now/);
    await slashInChat('/nope', s.commands, s.surface);
    expect(s.notices.at(-1)).toMatch(/There is no command \/nope/);
    expect(await slashInChat('plain text', s.commands, s.surface)).toEqual({ kind: 'send', text: 'plain text', extras: {} });
  });
});
