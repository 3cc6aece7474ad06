import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/** TodoWrite in `keel run`: `todos` events in stream-json, a checklist in text output, the list kept for a resumed task. */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (format: string, ...extra: string[]) => ['run', 'fix the bug', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', format, '--no-memory', ...extra];
const todo = (id: string, todos: { content: string; status: string; activeForm?: string }[]) => ({ blocks: [{ type: 'tool_use' as const, id, name: 'TodoWrite', input: { todos } }] });
const PLAN = [
  { content: 'Read the failing test', status: 'completed' },
  { content: 'Fix the parser', status: 'in_progress', activeForm: 'Fixing the parser' },
  { content: 'Run the tests', status: 'pending' },
];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-todo-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-todo-home-'));
});
afterEach(async () => {
  await server.close();
});

describe('the todo list', () => {
  for (const workers of ['0', '1']) {
    it(`TodoWrite's list is a todos event each time, needs no permission, and stays with the stored task (workers ${workers})`, async () => {
      server.enqueue(todo('toolu_t1', PLAN), todo('toolu_t2', PLAN.map((t) => ({ ...t, status: 'completed' }))), { blocks: [{ type: 'text', text: 'Fixed.' }] });
      const r = await runCli(args('stream-json', '--workers', workers), KEY, storage);
      expect((await r.exit).code, r.stderr()).toBe(0);
      const todos = ofType(r.events, 'todos');
      expect(todos).toHaveLength(2);
      expect(todos[0]!.todos).toEqual(PLAN);
      expect((todos[1]!.todos as { status: string }[]).every((t) => t.status === 'completed')).toBe(true);
      expect(ofType(r.events, 'permission')[0]).toMatchObject({ tool: 'TodoWrite', decision: 'allow' });
      const id = String(ofType(r.events, 'task')[0]!.taskId);
      const show = await runCli(['tasks', 'show', id], {}, storage);
      expect((await show.exit).code, show.stderr()).toBe(0);
      expect(show.stdout()).toContain('todos:     [x] Read the failing test; [x] Fix the parser; [x] Run the tests');
    });
  }

  it('keel run in text mode prints the checklist as it changes', async () => {
    server.enqueue(todo('toolu_t1', PLAN), { blocks: [{ type: 'text', text: 'Working on it.' }] });
    const r = await runCli(args('text'), KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr()).toContain('Todos (1/3 done):\n  [x] Read the failing test\n  [~] Fixing the parser\n  [ ] Run the tests\n');
  });
});
