import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationMessage, ToolResultBlock } from '../../../src/shared/domain/messages';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { createDemoProvider, demoAnswer, tourBlocks } from '../../../src/core/providers/demo';
import { nextTourStep, outcomeOf, TOUR_ADDED, TOUR_FILE, TOUR_ID_PREFIX, type TourStep } from '../../../src/core/providers/demoTour';
import { readTool } from '../../../src/core/tools/read';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { makeContext } from '../tools/helpers';

const SAMPLE = resolve(__dirname, '../../../examples/sample-workspace');
const temps: string[] = [];
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sampleCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-demo-'));
  temps.push(dir);
  cpSync(SAMPLE, dir, { recursive: true });
  return dir;
}

const user = (text: string): ConversationMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const call = (id: string, name: string, input: Record<string, unknown>): ConversationMessage => ({ role: 'assistant', content: [{ type: 'text', text: '…' }, { type: 'tool_use', id, name, input }] });
const result = (id: string, content: string, isError = false): ConversationMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] });

/** What the real Read tool answers for `file` in `workspace`. */
async function readResult(workspace: string, file = TOUR_FILE): Promise<{ content: string; isError: boolean }> {
  const r = await readTool.invoke({ file_path: file }, makeContext(workspace));
  return { content: r.content, isError: r.isError };
}

const ids = { read: `${TOUR_ID_PREFIX}read_1`, edit: `${TOUR_ID_PREFIX}edit_1`, bash: `${TOUR_ID_PREFIX}bash_1` };
const DENIED = 'The user denied this Edit call. Feedback: not now';
const PLAN = 'Permission denied: plan mode allows read-only tools only.';

async function afterRead(workspace: string): Promise<ConversationMessage[]> {
  const r = await readResult(workspace);
  return [user('show me'), call(ids.read, 'Read', { file_path: TOUR_FILE }), result(ids.read, r.content, r.isError)];
}

function textOf(step: TourStep): string {
  return tourBlocks(step)
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('');
}

describe('the demo tour: the next step is decided by the conversation', () => {
  it('a first prompt starts the tour: it thinks, says what it will do, and reads the sample file', () => {
    const step = nextTourStep([user('Refactor utils.ts please')]);
    expect(step).toEqual({ kind: 'intro', prompt: 'Refactor utils.ts please', restart: false });
    const blocks = tourBlocks(step);
    expect(blocks.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(blocks[2]).toMatchObject({ type: 'tool_use', name: 'Read', input: { file_path: TOUR_FILE } });
    expect(textOf(step)).toContain('“Refactor utils.ts please”');
    expect(textOf(step)).toContain('**demo model**');
    expect(nextTourStep([])).toEqual({ kind: 'intro', prompt: '', restart: false });
  });

  it('after reading the sample it proposes the edit; on a file it already edited, the edit back', async () => {
    const ws = sampleCopy();
    const step = nextTourStep(await afterRead(ws));
    expect(step.kind).toBe('edit');
    const edit = step.kind === 'edit' ? step.edit : undefined;
    expect(edit?.direction).toBe('add');
    const original = readFileSync(join(ws, TOUR_FILE), 'utf8');
    const edited = original.replace(edit!.oldString, edit!.newString);
    expect(edited).toContain('name = name.trim();');
    writeFileSync(join(ws, TOUR_FILE), edited);
    const again = nextTourStep(await afterRead(ws));
    expect(again.kind === 'edit' && again.edit.direction).toBe('remove');
    expect(again.kind === 'edit' && edited.replace(again.edit.oldString, again.edit.newString)).toBe(original);
  });

  it('without the sample file (or with another file of that name) it writes a note instead', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'keel-demo-empty-'));
    temps.push(empty);
    const missing = nextTourStep(await afterRead(empty));
    expect(missing).toMatchObject({ kind: 'write', read: { status: 'failed' } });
    expect(tourBlocks(missing).at(-1)).toMatchObject({ type: 'tool_use', name: 'Write', input: { file_path: 'KEEL-DEMO.md' } });
    expect(textOf(missing)).toContain(`This workspace has no \`${TOUR_FILE}\``);

    const other = sampleCopy();
    writeFileSync(join(other, TOUR_FILE), 'export const x = 1;\n');
    const foreign = nextTourStep(await afterRead(other));
    expect(foreign).toMatchObject({ kind: 'write', read: { status: 'done' } });
    expect(textOf(foreign)).toContain('not the sample workspace');
  });

  it('reacts to Allow, Deny and Plan mode on the edit, each with its own words', async () => {
    const base = [...(await afterRead(sampleCopy())), call(ids.edit, 'Edit', { file_path: TOUR_FILE, old_string: 'a', new_string: 'b' })];
    const allowed = nextTourStep([...base, result(ids.edit, 'Edited /w/src/greet.ts: 1 replacement.')]);
    const denied = nextTourStep([...base, result(ids.edit, DENIED, true)]);
    const plan = nextTourStep([...base, result(ids.edit, PLAN, true)]);
    expect(allowed).toMatchObject({ kind: 'command', change: { status: 'done' } });
    expect(denied).toMatchObject({ kind: 'command', change: { status: 'denied', detail: 'not now' } });
    expect(plan).toEqual({ kind: 'planStop', changeTool: 'Edit' });
    expect(textOf(allowed)).toContain('The edit is in');
    expect(textOf(denied)).toContain('The edit was denied (“not now”)');
    expect(tourBlocks(allowed).at(-1)).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'node -p process.version' } });
    expect(tourBlocks(plan).some((b) => b.type === 'tool_use')).toBe(false);
    expect(textOf(plan)).toContain('**Plan** mode');
  });

  it('ends with what happened to the edit and the command', async () => {
    const base = [
      ...(await afterRead(sampleCopy())),
      call(ids.edit, 'Edit', { file_path: TOUR_FILE, old_string: 'a', new_string: 'b' }),
      result(ids.edit, 'Edited.'),
      call(ids.bash, 'Bash', { command: 'node -p process.version' }),
    ];
    const ran = nextTourStep([...base, result(ids.bash, 'v20.19.0\n')]);
    const refused = nextTourStep([...base, result(ids.bash, 'The user denied this Bash call.', true)]);
    expect(ran).toMatchObject({ kind: 'wrapUp', change: { status: 'done' }, command: { status: 'done' } });
    expect(textOf(ran)).toContain('printed `v20.19.0`');
    expect(textOf(ran)).toContain('**Bash** `node -p process.version`: allowed, so it ran');
    expect(refused).toMatchObject({ kind: 'wrapUp', command: { status: 'denied' } });
    expect(textOf(refused)).toContain('The command was denied, so it did not run.');
    expect(textOf(refused)).toContain('denied, so it never ran');
    // A call whose result never came back (cut off) counts as interrupted, not as allowed.
    expect(nextTourStep(base)).toMatchObject({ kind: 'wrapUp', command: { status: 'interrupted' } });
  });

  it('a later prompt gets a short answer, or the tour again when it asks for it', async () => {
    const done = [
      ...(await afterRead(sampleCopy())),
      call(ids.edit, 'Edit', {}),
      result(ids.edit, 'Edited.'),
      call(ids.bash, 'Bash', {}),
      result(ids.bash, 'v20'),
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: "That's the tour." }] },
    ];
    const short = nextTourStep([...done, user('thanks, what else?')]);
    expect(short).toEqual({ kind: 'followUp', prompt: 'thanks, what else?' });
    expect(textOf(short)).toContain('Say **tour**');
    expect(nextTourStep([...done, user('show me the tour again')])).toEqual({ kind: 'intro', prompt: 'show me the tour again', restart: true });
  });

  it("never takes a real model's tool calls for the tour's", () => {
    const foreign = [user('fix it'), call('toolu_real_1', 'Edit', {}), result('toolu_real_1', 'Edited.'), user('and now?')];
    expect(nextTourStep(foreign)).toEqual({ kind: 'intro', prompt: 'and now?', restart: false });
  });

  it('reads outcomes from the tool results Keel sends', () => {
    const r = (content: string, is_error = true): ToolResultBlock => ({ type: 'tool_result', tool_use_id: 'x', content, is_error });
    expect(outcomeOf(r('fine', false))).toEqual({ status: 'done', detail: 'fine' });
    expect(outcomeOf(r('The user denied this Bash call.'))).toEqual({ status: 'denied', detail: '' });
    // VS Code's broker words a silent Deny itself: that is no feedback to quote.
    expect(outcomeOf(r('The user denied this Bash call. Feedback: The user denied this.'))).toEqual({ status: 'denied', detail: '' });
    expect(outcomeOf(r('The user denied this Edit call. Feedback: keep it short'))).toEqual({ status: 'denied', detail: 'keep it short' });
    expect(outcomeOf(r('Permission denied: running a command (dontAsk mode denies what would ask).'))).toMatchObject({ status: 'refused' });
    // Headless: denied because nobody was there to ask (not refused by a rule or the mode).
    const unattended = 'Keel would ask first (running a command no rule allows) and a headless run has no one to ask; --mode bypassPermissions would allow it';
    expect(outcomeOf(r(`Permission denied: ${unattended}.`))).toEqual({ status: 'denied', detail: unattended });
    expect(outcomeOf(r(PLAN))).toMatchObject({ status: 'refusedByPlan' });
    expect(outcomeOf(r('The tool call was interrupted before it finished; it did not run to completion.'))).toMatchObject({ status: 'interrupted' });
    expect(outcomeOf(r('old_string not found'))).toMatchObject({ status: 'failed' });
  });

  it('answers as the demo model with usage', () => {
    const turn = demoAnswer({ model: 'demo', system: ['s'], messages: [user('hi')], tools: [], maxTokens: 100 });
    expect(turn.model).toBe('demo model');
    expect(turn.usage?.input_tokens).toBeGreaterThan(0);
    expect(createDemoProvider().label).toBe('demo model');
  });
});

/** An asker that answers each tool by name, recording what it was asked. */
function asker(answers: Record<string, PermissionAnswer['decision']>): PermissionAsker & { asked: PermissionRequest[] } {
  const asked: PermissionRequest[] = [];
  return {
    asked,
    ask: async (request) => {
      asked.push(request);
      return { decision: answers[request.tool] ?? 'deny' };
    },
  };
}

async function tour(mode: PermissionMode, answers: Record<string, PermissionAnswer['decision']>) {
  const workspace = sampleCopy();
  const a = asker(answers);
  const runtime = new TaskRuntime({ workspace, providerFactory: () => createDemoProvider({ delayMs: 0 }), asker: a });
  const task = runtime.startTask({ prompt: 'What can you do?', provider: { provider: 'demo', model: 'demo' }, mode });
  const events: TaskEvent[] = [];
  task.subscribe((e) => events.push(e));
  const done = await task.settled();
  const texts = task
    .transcript()
    .items.flatMap((i) => (i.kind === 'assistant' ? [i.text] : []));
  const tools = task.transcript().items.flatMap((i) => (i.kind === 'tool' ? [`${i.name}:${i.result?.isError ? 'error' : 'ok'}`] : []));
  runtime.dispose();
  return { workspace, done, texts, tools, asked: a.asked.map((r) => r.tool), events, file: readFileSync(join(workspace, TOUR_FILE), 'utf8') };
}

describe('the demo tour through the real runtime (machines, permission engine, tools)', () => {
  it('Allow on both: the file changes, the command runs, and the last words say so', async () => {
    const t = await tour('default', { Edit: 'allow', Bash: 'allow' });
    expect(t.done.status).toBe('completed');
    expect(t.asked).toEqual(['Edit', 'Bash']);
    expect(t.tools).toEqual(['Read:ok', 'Edit:ok', 'Bash:ok']);
    expect(t.file).toContain(TOUR_ADDED);
    // It quotes the region the Edit tool answered with, as a code block.
    expect(t.texts.join('\n')).toContain("```ts\n/** Greets someone by name, e.g. `greet('Ada')` is \"Hello, Ada!\". */\nexport function greet(");
    expect(t.texts.at(-1)).toMatch(/The command ran and printed `v\d+/);
    expect(t.events.find((e) => e.type === 'assistant_start')).toMatchObject({ model: 'demo model' });
  });

  it('Deny on both: nothing changes, and the last words say both were denied', async () => {
    const t = await tour('default', { Edit: 'deny', Bash: 'deny' });
    expect(t.done.status).toBe('completed');
    expect(t.file).not.toContain('name.trim()');
    expect(t.texts.join('\n')).toContain('The edit was denied');
    expect(t.texts.at(-1)).toContain('The command was denied, so it did not run.');
  });

  it('Plan mode refuses the edit before anyone is asked, and the tour says so and stops', async () => {
    const t = await tour('plan', { Edit: 'allow', Bash: 'allow' });
    expect(t.done.status).toBe('completed');
    expect(t.asked).toEqual([]);
    expect(t.tools).toEqual(['Read:ok', 'Edit:error']);
    expect(existsSync(join(t.workspace, TOUR_FILE)) && t.file).not.toContain('name.trim()');
    expect(t.texts.at(-1)).toContain('**Plan** mode');
  });
});
