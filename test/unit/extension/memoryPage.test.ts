import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatController } from '../../../src/extension/chatController';
import { resolveMemoryFile } from '../../../src/extension/memory/memoryPaths';
import type { MemoryWorkbench } from '../../../src/extension/memory/memoryRequests';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { MemorySettingName } from '../../../src/shared/protocol/memoryMessages';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { fakeHost, recordingPort } from './fakes';

/** The Memory page's messages between the chat webview and the host, over real files in a temp workspace. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function memoryFile(title: string, body: string, extra = '', tags = 'testing, vitest'): string {
  return `---\ntitle: ${title}\ncreated: 2026-01-02T10:00:00.000Z\n${extra}tags: [${tags}]\n---\n${body}\n`;
}

function workspace() {
  const root = mkdtempSync(join(tmpdir(), 'keel-memory-page-'));
  dirs.push(root);
  const ws = join(root, 'ws');
  const mem = join(ws, '.keel', 'memory');
  mkdirSync(mem, { recursive: true });
  writeFileSync(join(mem, 'unit-tests.md'), memoryFile('Unit tests run with vitest', 'npm run test:unit runs them; the e2e tests need npm run package first.', 'source: 3f2a9c01-task\n'));
  writeFileSync(join(mem, 'deploy.md'), memoryFile('Deploys go through the staging branch', 'Push to staging; CI deploys after review.', '', 'deploy, ci'));
  // Outside the workspace: what a crafted name or a link must never reach.
  const secret = join(root, 'secret.md');
  writeFileSync(secret, memoryFile('Outside', 'not a memory of this workspace'));
  return { root, ws, mem, secret };
}

class FakeMemoryWorkbench implements MemoryWorkbench {
  confirmAnswer = true;
  confirms: Array<[string, string]> = [];
  opened: string[] = [];
  set: Array<[MemorySettingName, boolean]> = [];
  current = { enabled: true, autoSave: false };
  private changed: (() => void) | undefined;
  constructor(private readonly folder: string | undefined) {}
  workspace = () => this.folder;
  settings = () => ({ ...this.current });
  async setSetting(name: MemorySettingName, value: boolean) {
    this.set.push([name, value]);
    this.current[name] = value;
  }
  async confirmDelete(title: string, file: string) {
    this.confirms.push([title, file]);
    return this.confirmAnswer;
  }
  async openFile(path: string) {
    this.opened.push(path);
  }
  watch(_workspace: string, onChange: () => void) {
    this.changed = onChange;
    return () => (this.changed = undefined);
  }
  /** What VS Code's file watcher does when a file in the folder changes. */
  fileChanged() {
    this.changed?.();
  }
}

async function setup(folder: string | undefined) {
  const h = fakeHost();
  const memory = new FakeMemoryWorkbench(folder);
  const c = new ChatController({ ...h.host, memory });
  const port = recordingPort();
  const conn = new ViewConnection('v1', 'sidebar', port.post, h.log);
  c.attach(conn);
  const send = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await c.handle(conn, m);
  };
  await send({ type: 'ready' });
  return { c, h, memory, port, send };
}
const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);
const notices = (ms: ToWebviewMessage[]) => of(ms, 'notice').map((n) => n.message);
const listed = (ms: ToWebviewMessage[]) => of(ms, 'memories').at(-1)?.state.memories.map((m) => m.file);

describe('the Memory page, host side', () => {
  it('getMemories lists every memory with its front matter, a preview and the settings', async () => {
    const { ws } = workspace();
    const { port, send } = await setup(ws);
    await send({ type: 'getMemories' });
    const state = of(port.posted, 'memories').at(-1)!.state;
    expect(state).toMatchObject({ available: true, dir: join(ws, '.keel', 'memory'), problems: [], settings: { enabled: true, autoSave: false } });
    expect(state.memories).toEqual([
      { file: 'deploy.md', title: 'Deploys go through the staging branch', created: '2026-01-02T10:00:00.000Z', tags: ['deploy', 'ci'], preview: 'Push to staging; CI deploys after review.' },
      {
        file: 'unit-tests.md',
        title: 'Unit tests run with vitest',
        created: '2026-01-02T10:00:00.000Z',
        source: '3f2a9c01-task',
        tags: ['testing', 'vitest'],
        preview: 'npm run test:unit runs them; the e2e tests need npm run package first.',
      },
    ]);
  });

  it('a long memory is cut to a one-line preview the page schema accepts', async () => {
    const { ws, mem } = workspace();
    writeFileSync(join(mem, 'long.md'), memoryFile('Long', `first line\n\n${'word '.repeat(500)}`));
    const { port, send } = await setup(ws);
    await send({ type: 'getMemories' });
    const long = of(port.posted, 'memories').at(-1)!.state.memories.find((m) => m.file === 'long.md')!;
    expect(long.preview.startsWith('first line word word')).toBe(true);
    expect(long.preview.length).toBeLessThanOrEqual(241);
    expect(long.preview).not.toContain('\n');
  });

  it('no folder open: the page says memory is not available, and an action does nothing', async () => {
    const { port, send } = await setup(undefined);
    await send({ type: 'getMemories' });
    expect(of(port.posted, 'memories').at(-1)?.state.available).toBe(false);
    await send({ type: 'memoryAction', action: 'delete', file: 'x.md' });
    expect(notices(port.posted).at(-1)).toMatch(/Open a folder first/);
  });

  it('Delete asks in a modal first; declined, the file stays; confirmed, it is gone from disk and from the list', async () => {
    const { ws, mem } = workspace();
    const { memory, port, send } = await setup(ws);
    await send({ type: 'getMemories' });
    memory.confirmAnswer = false;
    await send({ type: 'memoryAction', action: 'delete', file: 'deploy.md' });
    expect(memory.confirms).toEqual([['Deploys go through the staging branch', 'deploy.md']]);
    expect(existsSync(join(mem, 'deploy.md'))).toBe(true);
    expect(listed(port.posted)).toEqual(['deploy.md', 'unit-tests.md']);
    memory.confirmAnswer = true;
    await send({ type: 'memoryAction', action: 'delete', file: 'deploy.md' });
    expect(existsSync(join(mem, 'deploy.md'))).toBe(false);
    expect(listed(port.posted)).toEqual(['unit-tests.md']);
    expect(notices(port.posted).at(-1)).toBe('Deleted the memory "Deploys go through the staging branch" (deploy.md).');
  });

  it('a crafted name never reaches a file outside .keel/memory/: refused with why, before any modal', async () => {
    const { ws, root, secret } = workspace();
    writeFileSync(join(ws, 'README.md'), 'the project');
    const { memory, port, send, h } = await setup(ws);
    for (const file of ['../x.md', '../../secret.md', '../README.md', 'a/b.md', '/etc/passwd', '.hidden.md', 'notes.txt', '..md', 'x.md\u0000.md']) {
      await send({ type: 'memoryAction', action: 'delete', file });
      expect(notices(port.posted).at(-1), file).toMatch(/^Not deleted: .* is not a memory file name/);
      await send({ type: 'memoryAction', action: 'open', file });
      expect(notices(port.posted).at(-1), file).toMatch(/^Not opened: .* is not a memory file name/);
    }
    expect(memory.confirms).toEqual([]);
    expect(memory.opened).toEqual([]);
    expect(existsSync(secret)).toBe(true);
    expect(existsSync(join(ws, 'README.md'))).toBe(true);
    expect(h.log.lines.filter((l) => l.startsWith('warn Memory page: refused')).length).toBe(18);
    expect(root).toBeTruthy();
  });

  it('a memory that is a symbolic link (to a file outside, or inside) is neither opened nor deleted, and its target is untouched', async () => {
    const { ws, mem, secret } = workspace();
    symlinkSync(secret, join(mem, 'linked.md'));
    symlinkSync(join(mem, 'deploy.md'), join(mem, 'alias.md'));
    const { memory, port, send } = await setup(ws);
    for (const file of ['linked.md', 'alias.md']) {
      await send({ type: 'memoryAction', action: 'delete', file });
      expect(notices(port.posted).at(-1)).toBe(`Not deleted: ${file} is a symbolic link; only plain files in .keel/memory/ are opened or deleted.`);
      await send({ type: 'memoryAction', action: 'open', file });
      expect(notices(port.posted).at(-1)).toMatch(/^Not opened: .* is a symbolic link/);
    }
    expect(memory.confirms).toEqual([]);
    expect(memory.opened).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toContain('Outside');
    // The list shows plain files only: a link is not a memory of this workspace.
    expect(listed(port.posted)).toEqual(['deploy.md', 'unit-tests.md']);
  });

  it('a memory folder that is a link out of the workspace is not read, opened or deleted from', async () => {
    const { root } = workspace();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'victim.md'), memoryFile('Victim', 'outside the workspace'));
    const ws = join(root, 'ws2');
    mkdirSync(join(ws, '.keel'), { recursive: true });
    symlinkSync(elsewhere, join(ws, '.keel', 'memory'));
    const { memory, port, send } = await setup(ws);
    await send({ type: 'getMemories' });
    const state = of(port.posted, 'memories').at(-1)!.state;
    expect(state.memories).toEqual([]);
    expect(state.problems[0]).toMatch(/outside the workspace/);
    await send({ type: 'memoryAction', action: 'delete', file: 'victim.md' });
    expect(notices(port.posted).at(-1)).toMatch(/^Not deleted: \.keel\/memory\/ resolves to .*outside the workspace/);
    expect(memory.confirms).toEqual([]);
    expect(existsSync(join(elsewhere, 'victim.md'))).toBe(true);
  });

  it('a memory deleted while the modal was open is reported, not an error', async () => {
    const { ws, mem } = workspace();
    const { memory, port, send } = await setup(ws);
    memory.confirmDelete = async () => {
      rmSync(join(mem, 'deploy.md'));
      return true;
    };
    await send({ type: 'memoryAction', action: 'delete', file: 'deploy.md' });
    expect(notices(port.posted).at(-1)).toBe('Not deleted: there is no memory deploy.md in .keel/memory/.');
    await send({ type: 'memoryAction', action: 'delete', file: 'never-there.md' });
    expect(notices(port.posted).at(-1)).toBe('Not deleted: there is no memory never-there.md in .keel/memory/.');
  });

  it('Open opens the resolved file in an editor', async () => {
    const { ws, mem } = workspace();
    const { memory, send } = await setup(ws);
    await send({ type: 'memoryAction', action: 'open', file: 'unit-tests.md' });
    expect(memory.opened).toEqual([join(mem, 'unit-tests.md')]);
  });

  it('invalid messages are rejected with a clear error in the log and never reach the handler', async () => {
    const { ws, mem } = workspace();
    const { memory, send, h, port } = await setup(ws);
    const before = port.posted.length;
    await send({ type: 'memoryAction', action: 'wipe', file: 'deploy.md' });
    await send({ type: 'memoryAction', action: 'delete' });
    await send({ type: 'memoryAction', action: 'delete', file: '' });
    await send({ type: 'memoryAction', action: 'delete', file: `${'a'.repeat(300)}.md` });
    await send({ type: 'setMemorySetting', setting: 'everything', value: true });
    await send({ type: 'setMemorySetting', setting: 'enabled', value: 'yes' });
    await send({ type: 'searchMemories', queryId: -1, query: 'x' });
    const dropped = h.log.lines.filter((l) => l.startsWith('warn view v1: dropped an invalid message'));
    expect(dropped).toHaveLength(7);
    expect(dropped[0]).toMatch(/action/);
    expect(dropped[2]).toMatch(/empty memory file name/);
    expect(dropped[3]).toMatch(/memory file name too long/);
    expect(port.posted.length).toBe(before);
    expect(memory.confirms).toEqual([]);
    expect(memory.set).toEqual([]);
    expect(existsSync(join(mem, 'deploy.md'))).toBe(true);
  });

  it('search ranks with the runs\' index: the memory about the words comes first, one that shares none is left out', async () => {
    const { ws } = workspace();
    const { port, send } = await setup(ws);
    await send({ type: 'searchMemories', queryId: 7, query: 'how do I run the vitest tests' });
    expect(of(port.posted, 'memorySearch').at(-1)).toMatchObject({ queryId: 7, files: ['unit-tests.md'] });
    await send({ type: 'searchMemories', queryId: 8, query: 'staging deploys' });
    expect(of(port.posted, 'memorySearch').at(-1)).toMatchObject({ queryId: 8, files: ['deploy.md'] });
    await send({ type: 'searchMemories', queryId: 9, query: 'tests and deploys' });
    expect(of(port.posted, 'memorySearch').at(-1)?.files.sort()).toEqual(['deploy.md', 'unit-tests.md']);
    await send({ type: 'searchMemories', queryId: 10, query: 'kubernetes' });
    expect(of(port.posted, 'memorySearch').at(-1)).toMatchObject({ queryId: 10, files: [] });
  });

  it('a change of the folder (the file watcher) reaches every view; a setting changed on the page applies', async () => {
    const { ws, mem } = workspace();
    const { memory, port, send } = await setup(ws);
    await send({ type: 'getMemories' });
    writeFileSync(join(mem, 'new.md'), memoryFile('A new one', 'added in the editor'));
    memory.fileChanged();
    await expect.poll(() => listed(port.posted)).toEqual(['deploy.md', 'new.md', 'unit-tests.md']);
    await send({ type: 'setMemorySetting', setting: 'autoSave', value: true });
    expect(memory.set).toEqual([['autoSave', true]]);
    expect(of(port.posted, 'memories').at(-1)?.state.settings).toEqual({ enabled: true, autoSave: true });
  });
});

describe('resolveMemoryFile', () => {
  it('gives the real path of a plain memory file, and a coded refusal for anything else', () => {
    const { ws, mem } = workspace();
    mkdirSync(join(mem, 'folder.md'));
    expect(resolveMemoryFile(ws, 'deploy.md')).toEqual({ ok: true, path: join(mem, 'deploy.md') });
    expect(resolveMemoryFile(ws, '../deploy.md')).toMatchObject({ ok: false, code: 'invalid_name' });
    expect(resolveMemoryFile(ws, 'folder.md')).toMatchObject({ ok: false, code: 'not_a_file' });
    expect(resolveMemoryFile(ws, 'gone.md')).toMatchObject({ ok: false, code: 'not_found' });
    expect(resolveMemoryFile(join(ws, 'nowhere'), 'deploy.md')).toMatchObject({ ok: false, code: 'not_found' });
  });
});
