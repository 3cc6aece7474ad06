import { describe, expect, it } from 'vitest';
import { TaskHookPoints } from '../../../src/core/hooks/taskHooks';
import { EMPTY_OUTCOME, type HookInput } from '../../../src/core/hooks/types';
import { loadHooksConfig } from '../../../src/core/hooks/config';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PostCompact, PostToolUseFailure, SubagentStart and InstructionsLoaded: what each hook receives (Claude Code's fields). */
describe('the events Keel now fires', () => {
  const points = (sessionId = 'task-1') => {
    const fired: HookInput[] = [];
    const p = new TaskHookPoints(
      { fire: async (input: HookInput) => (fired.push(input), EMPTY_OUTCOME) },
      { taskId: 'task-1', sessionId, workspace: '/ws', transcriptPath: '', mode: () => 'default', requestStop: () => undefined, log: () => undefined },
    );
    return { p, fired };
  };

  it('PostCompact carries the summary; PostToolUseFailure the error, instead of PostToolUse', async () => {
    const { p, fired } = points();
    await p.postCompact('auto', 'We fixed the parser.');
    await p.postToolUse({ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'false' } }, { type: 'tool_result', tool_use_id: 't1', content: 'exit 1', is_error: true }, 5, new AbortController().signal);
    await p.postToolUse({ type: 'tool_use', id: 't2', name: 'Bash', input: { command: 'true' } }, { type: 'tool_result', tool_use_id: 't2', content: 'ok' }, 5, new AbortController().signal);
    expect(fired.map((f) => f.hook_event_name)).toEqual(['PostCompact', 'PostToolUseFailure', 'PostToolUse']);
    expect(fired[0]).toMatchObject({ trigger: 'auto', compact_summary: 'We fixed the parser.', session_id: 'task-1', cwd: '/ws' });
    expect(fired[1]).toMatchObject({ tool_name: 'Bash', tool_use_id: 't1', error: 'exit 1' });
  });

  it('SubagentStart names the sub-agent; InstructionsLoaded each file, an import with its parent', async () => {
    const { p, fired } = points();
    p.subagentStart('child-9');
    p.instructionsLoaded(
      [
        { path: '/home/me/.keel/KEEL.md', scope: 'user' },
        { path: '/ws/docs/style.md', scope: 'workspace', importedBy: 'CLAUDE.md' },
      ],
      (display) => (display === 'CLAUDE.md' ? '/ws/CLAUDE.md' : undefined),
    );
    await new Promise((r) => setImmediate(r));
    expect(fired[0]).toMatchObject({ hook_event_name: 'SubagentStart', agent_id: 'child-9', agent_type: 'Task' });
    expect(fired[1]).toMatchObject({ hook_event_name: 'InstructionsLoaded', file_path: '/home/me/.keel/KEEL.md', memory_type: 'User', load_reason: 'session_start' });
    expect(fired[2]).toMatchObject({ file_path: '/ws/docs/style.md', memory_type: 'Project', load_reason: 'include', parent_file_path: '/ws/CLAUDE.md' });
  });

  it('settings with these events load; an event Keel does not fire is still reported', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-events-'));
    const path = join(dir, 'settings.json');
    const h = [{ hooks: [{ type: 'command', command: 'x' }] }];
    writeFileSync(path, JSON.stringify({ hooks: { PostToolUseFailure: h, PostCompact: h, SubagentStart: h, InstructionsLoaded: h, TeammateIdle: h } }));
    const loaded = loadHooksConfig([{ path, scope: 'user' }]);
    expect(loaded.hooks.map((x) => x.event)).toEqual(['PostToolUseFailure', 'PostCompact', 'SubagentStart', 'InstructionsLoaded']);
    expect(loaded.problems).toEqual([expect.stringContaining('hooks.TeammateIdle: Keel does not fire this event')]);
  });

  it('an "agent" hook is said plainly not to run (never silently ignored); a "prompt" hook is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-prompt-hook-'));
    const path = join(dir, 'settings.json');
    writeFileSync(path, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'agent', prompt: 'Check the tests pass' }, { type: 'prompt', prompt: 'Are all tasks done? $ARGUMENTS' }] }] } }));
    const loaded = loadHooksConfig([{ path, scope: 'user' }]);
    expect(loaded.hooks).toEqual([expect.objectContaining({ event: 'Stop', type: 'prompt', command: 'Are all tasks done? $ARGUMENTS' })]);
    expect(loaded.problems).toEqual([expect.stringMatching(/hooks\.Stop\[0\]\.hooks\[0\]: "agent" hooks \(a sub-agent judging the event\) are not supported by Keel: this hook never runs/)]);
  });
});
