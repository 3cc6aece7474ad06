import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatController } from '../../../src/extension/chatController';
import { TaskBook } from '../../../src/extension/taskBook';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { FakeTask, fakeHost, recordingPort } from './fakes';

function view(controller: ChatController, h: ReturnType<typeof fakeHost>, id = 'v1') {
  const port = recordingPort();
  const conn = new ViewConnection(id, 'sidebar', port.post, h.log);
  controller.attach(conn);
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await controller.handle(conn, m);
  };
  return { conn, port, fromPage };
}
const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);

afterEach(() => vi.useRealTimers());

describe('chat pages and composer requests', () => {
  it('the mode selector sets the mode of the next task and shows in the config', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'setMode', mode: 'plan' });
    expect(of(v.port.posted, 'snapshot').at(-1)?.config.mode).toBe('plan');
    await v.fromPage({ type: 'prompt', text: 'look around' });
    expect(h.runtime.tasks[0]!.options.mode).toBe('plan');
    await v.fromPage({ type: 'setMode', mode: 'bogus' });
    expect(h.log.lines.some((l) => l.includes('dropped an invalid message'))).toBe(true);
  });

  it('history lists tasks newest first with tokens and cost; delete hides one; open shows it', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'first task' });
    const t1 = h.runtime.tasks[0]!;
    t1.emit({ type: 'usage', taskId: t1.id, inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0, costUsd: 0.01, totalCostUsd: 0.01 });
    await v.fromPage({ type: 'newTask' });
    await v.fromPage({ type: 'prompt', text: 'second task' });
    await v.fromPage({ type: 'listTasks' });
    const list = of(v.port.posted, 'taskList').at(-1)!.tasks;
    expect(list.map((t) => t.title).sort()).toEqual(['first task', 'second task']);
    const first = list.find((t) => t.title === 'first task')!;
    expect(first).toMatchObject({ inputTokens: 105, outputTokens: 20, costUsd: 0.01, current: false });
    await v.fromPage({ type: 'deleteTask', taskId: t1.id });
    expect(of(v.port.posted, 'taskList').at(-1)!.tasks.map((t) => t.title)).toEqual(['second task']);
    await v.fromPage({ type: 'openTask', taskId: t1.id });
    expect(of(v.port.posted, 'snapshot').at(-1)?.transcript?.taskId).toBe(t1.id);
    await v.fromPage({ type: 'openTask', taskId: 'nope' });
    expect(of(v.port.posted, 'notice').at(-1)?.message).toMatch(/no longer available/);
  });

  it('@ mentions: only the last query of a burst is searched, answered with its id', async () => {
    vi.useFakeTimers();
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'mentionQuery', queryId: 1, query: 'g' });
    await v.fromPage({ type: 'mentionQuery', queryId: 2, query: 'gr' });
    await v.fromPage({ type: 'mentionQuery', queryId: 3, query: 'greet' });
    await vi.advanceTimersByTimeAsync(200);
    expect(h.workbench.searches).toEqual(['greet']);
    expect(of(v.port.posted, 'mentionResults')).toEqual([
      {
        type: 'mentionResults',
        seq: 2,
        queryId: 3,
        items: [
          { kind: 'file', insert: 'src/greet.ts', label: 'src/greet.ts' },
          { kind: 'file', insert: 'src/greet.test.ts', label: 'src/greet.test.ts' },
        ],
      },
    ]);
  });

  it('/ commands: a query is answered with the workbench\'s commands and its id; without a source, none', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'commandQuery', queryId: 4, query: 'mcp' });
    expect(of(v.port.posted, 'commandResults')).toEqual([{ type: 'commandResults', seq: 2, queryId: 4, commands: [] }]);
    h.workbench.findCommands = async (q) => (q === 'wea' ? [{ name: 'mcp__w__weather', description: 'Weather', arguments: [{ name: 'city', required: true }] }] : []);
    await v.fromPage({ type: 'commandQuery', queryId: 5, query: 'wea' });
    expect(of(v.port.posted, 'commandResults').at(-1)).toMatchObject({ queryId: 5, commands: [{ name: 'mcp__w__weather', arguments: [{ name: 'city', required: true }] }] });
    await v.fromPage({ type: 'commandQuery', queryId: -1, query: 'x' });
    expect(h.log.lines.some((l) => l.includes('dropped an invalid message'))).toBe(true);
  });

  it('settings: saving and storing a key answer with the state; the key itself never goes to a view', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'getSettings' });
    expect(of(v.port.posted, 'settings').at(-1)?.settings.hasKey.anthropic).toBe(false);
    await v.fromPage({ type: 'saveSettings', provider: 'openai-compatible', model: ' llama3 ', baseUrl: 'http://127.0.0.1:1234/v1' });
    expect(of(v.port.posted, 'settings').at(-1)?.settings).toMatchObject({ provider: 'openai-compatible', model: 'llama3', openaiBaseUrl: 'http://127.0.0.1:1234/v1' });
    await v.fromPage({ type: 'setApiKey', provider: 'anthropic', key: 'sk-ant-SECRET-123' });
    expect(h.workbench.keys.get('anthropic')).toBe('sk-ant-SECRET-123');
    expect(of(v.port.posted, 'settings').at(-1)?.settings.hasKey.anthropic).toBe(true);
    expect(JSON.stringify(v.port.posted)).not.toContain('SECRET');
    expect(h.log.lines.join('\n')).not.toContain('SECRET');
  });

  it('Save settings confirms what now applies, and says why when nothing was saved', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'saveSettings', provider: 'openai-compatible', model: '', baseUrl: 'http://127.0.0.1:1234/v1' });
    expect(of(v.port.posted, 'settingsSaved').at(-1)).toMatchObject({ ok: true, message: 'Saved. New tasks use the OpenAI-compatible server, model llama3.2 (the default).' });
    await v.fromPage({ type: 'saveSettings', provider: 'demo', model: '', baseUrl: '' });
    expect(of(v.port.posted, 'settingsSaved').at(-1)).toMatchObject({ ok: true, message: 'Saved. New tasks use the demo, model demo model.' });

    // An invalid base URL is refused before anything is written.
    await v.fromPage({ type: 'saveSettings', provider: 'anthropic', model: 'opus', baseUrl: 'localhost:8080' });
    expect(of(v.port.posted, 'settingsSaved').at(-1)).toMatchObject({ ok: false, message: expect.stringMatching(/^Not saved: the base URL must start with http/) });
    await v.fromPage({ type: 'saveSettings', provider: 'anthropic', model: 'opus', baseUrl: 'not a url' });
    expect(of(v.port.posted, 'settingsSaved').at(-1)).toMatchObject({ ok: false, message: expect.stringContaining('is not a URL') });
    expect(h.workbench.settings.provider).toBe('demo');

    // VS Code refusing to write (e.g. settings.json has errors) is said too.
    h.workbench.saveSettings = async () => {
      throw new Error('Unable to write into user settings. Please open the user settings to correct errors/warnings in it and try again.');
    };
    await v.fromPage({ type: 'saveSettings', provider: 'anthropic', model: '', baseUrl: '' });
    expect(of(v.port.posted, 'settingsSaved').at(-1)).toMatchObject({ ok: false, message: expect.stringContaining('Unable to write into user settings') });
  });

  it('resume answers "not available" until the core can resume; copy goes to the clipboard', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    await v.fromPage({ type: 'resume' });
    expect(of(v.port.posted, 'notice').at(-1)?.message).toMatch(/not available/);
    await v.fromPage({ type: 'copy', text: 'npm test' });
    expect(h.workbench.copied).toEqual(['npm test']);
  });
});

describe('TaskBook', () => {
  it('measures how long each answer thought and reports it once', () => {
    let now = 1000;
    const reported: Array<[string, number]> = [];
    const book = new TaskBook((_t, m, ms) => reported.push([m, ms]), () => now);
    const task = new FakeTask('t1', { prompt: 'x', provider: { provider: 'demo', model: 'demo' } });
    book.track(task, 'claude-sonnet-5-5');
    task.emit({ type: 'assistant_start', taskId: 't1', messageId: 'm1', model: 'claude-sonnet-5-5' });
    task.emit({ type: 'thinking', taskId: 't1', delta: 'a' });
    now = 4200;
    task.emit({ type: 'thinking', taskId: 't1', delta: 'b' });
    now = 13_000;
    task.emit({ type: 'text', taskId: 't1', delta: 'answer' });
    task.emit({ type: 'text', taskId: 't1', delta: 'more' });
    expect(reported).toEqual([['m1', 12_000]]);
    expect(book.meta('t1')).toMatchObject({ thinkingMs: { m1: 12_000 }, contextWindow: 200_000 });
  });
});
