import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessActivity } from '../../../src/core/agents/processActivity';
import type { PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import { ScriptedProvider, type ScriptedTurn } from '../../../src/core/providers/scripted';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { SecretKeeper } from '../../../src/core/security/secretKeeper';
import { Changes, eventually, watchDir } from '../helpers/changes';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * Hooks in a real TaskRuntime (scripted provider, real tools, the real permission engine, real
 * hook commands) where the CLI cannot show it: a person who can be asked. PreToolUse "ask" makes
 * an allowed call a question; PermissionRequest answers for the person; the status board shows
 * the task needing the person while the question waits; SubagentStop carries the sub-agent's id.
 */
let workspace: string;
let home: string;
let activity: ProcessActivity;
let runtime: TaskRuntime;
let asked: PermissionRequest[];
const askedChanges = new Changes();
let answer: (r: PermissionRequest) => Promise<'allow' | 'deny'>;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'keel-taskhooks-ws-'));
  home = mkdtempSync(join(tmpdir(), 'keel-taskhooks-home-'));
  writeFileSync(join(workspace, 'a.txt'), 'alpha\n');
  asked = [];
  answer = async () => 'allow';
});
afterEach(() => {
  runtime?.dispose();
  activity?.dispose();
});

function userHooks(hooks: Record<string, unknown>): void {
  mkdirSync(join(home, '.keel'), { recursive: true });
  writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ hooks }));
}

function start(turns: ScriptedTurn[], mode: PermissionMode = 'default') {
  const secrets = SecretKeeper.fromEnvironment(process.env);
  activity = new ProcessActivity({ workspace, keelHome: join(home, '.keel'), home, environment: () => secrets.environment(), log: () => undefined, trust: NOTHING_APPROVED });
  const asker: PermissionAsker = {
    ask: async (r) => {
      asked.push(r);
      askedChanges.notify();
      return { decision: await answer(r) };
    },
  };
  const provider = new ScriptedProvider(turns);
  runtime = new TaskRuntime({ workspace, asker, hooks: activity.hooks, feed: activity.feed, providerFactory: () => provider, secrets });
  const task = runtime.startTask({ prompt: 'go', provider: { provider: 'anthropic', model: 'scripted-model' }, mode });
  return { task, provider };
}

const read = (): ScriptedTurn => ({ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: 'a.txt' } }] });
const say = (text: string): ScriptedTurn => ({ blocks: [{ type: 'text', text }] });

describe('hooks in a task with a person to ask', () => {
  it('a PreToolUse "ask" turns an allowed read into a question; the board shows the task needs the person meanwhile', async () => {
    userHooks({ PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"reads are audited"}}'` }] }] });
    let release!: (d: 'allow') => void;
    answer = () => new Promise((r) => (release = r));
    const { task } = start([read(), say('read it')]);
    await askedChanges.until(() => asked.length === 1, () => 'never asked');
    expect(asked[0]!.reason).toContain('reads are audited');
    expect(activity.board.row(task.id)).toMatchObject({ status: 'attention', attention: 'permission' });
    release('allow');
    expect((await task.settled()).status).toBe('completed');
    expect(activity.board.row(task.id)?.status).toBe('done');
  });

  it('a PermissionRequest hook answers for the person (allow), and a Notification only goes out when the person is asked', async () => {
    const log = join(home, 'notified.log');
    userHooks({
      PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'` }] }],
      Notification: [{ hooks: [{ type: 'command', command: `jq -c '{notification_type, message}' >> ${log}` }] }],
    });
    const { task } = start([{ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo hi > out.txt' } }] }, { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: 'w.txt', content: 'w' } }] }, say('done')]);
    expect((await task.settled()).status).toBe('completed');
    // The Bash call was answered by the hook; the Write (no PermissionRequest hook for it) asked the person.
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
    expect(asked.map((r) => r.tool)).toEqual(['Write']);
    await eventually(() => existsSync(log) && readFileSync(log, 'utf8').endsWith('\n'), () => 'no notification', watchDir(home));
    expect(readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([{ notification_type: 'permission_prompt', message: 'Keel needs your permission to use Write' }]);
  });

  it('SubagentStop fires for a sub-agent with its agent_id; Stop for the task itself', async () => {
    const log = join(home, 'stops.log');
    userHooks({
      Stop: [{ hooks: [{ type: 'command', command: `jq -c '{hook_event_name, session_id, agent_id}' >> ${log}` }] }],
      SubagentStop: [{ hooks: [{ type: 'command', command: `jq -c '{hook_event_name, session_id, agent_id}' >> ${log}` }] }],
    });
    const { task } = start([{ blocks: [{ type: 'tool_use', name: 'Task', input: { description: 'sub', prompt: 'look' } }] }, say('sub answer'), say('parent answer')], 'bypassPermissions');
    expect((await task.settled()).status).toBe('completed');
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ hook_event_name: 'SubagentStop', session_id: task.id });
    expect(lines[0]!.agent_id).not.toBe(task.id);
    expect(lines[1]).toEqual({ hook_event_name: 'Stop', session_id: task.id, agent_id: null });
  });
});
