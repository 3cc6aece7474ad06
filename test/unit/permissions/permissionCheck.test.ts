import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import { decideToolCall, explainPermission } from '../../../src/core/runtime/permissionCheck';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { makeFixture, type PermissionFixture } from './fixture';

/**
 * The one decision path (runtime/permissionCheck.ts): what a run decides through the permission
 * machine, and what `keel permissions check` reports through `explainPermission`.
 */
let fx: PermissionFixture | undefined;
afterEach(() => fx?.cleanup());

const settings = { permissions: { allow: ['Bash(npm test)', 'Bash(git status)', 'Edit(./src/**)'], deny: ['Bash(rm:*)'], ask: ['Bash(git push:*)', 'Edit(./src/locked/**)'] } };

function recordingAsker(answer: 'allow' | 'deny' = 'deny'): PermissionAsker & { asked: PermissionRequest[] } {
  const asked: PermissionRequest[] = [];
  return { asked, ask: async (r) => (asked.push(r), { decision: answer }) };
}

async function decide(mode: PermissionMode, tool: string, input: Record<string, unknown>, asker = recordingAsker()) {
  const services = { workspace: fx!.ws, tools: createToolRegistry(), permissions: fx!.engine, asker, publish: () => undefined };
  const outcome = await decideToolCall(services, { taskId: 't', call: { type: 'tool_use', id: 'c', name: tool, input }, mode }, new AbortController().signal);
  return { outcome, asked: asker.asked };
}

describe('plan mode, as Claude Code: read-only tools and commands run, changes are denied', () => {
  it('allows read-only commands and reads, denies changes without asking anyone', async () => {
    fx = await makeFixture(settings);
    for (const command of ['git status', 'ls -la src', 'cat src/a.ts | head -1']) expect((await decide('plan', 'Bash', { command })).outcome.decision, command).toBe('allow');
    expect((await decide('plan', 'Read', { file_path: 'src/a.ts' })).outcome.decision).toBe('allow');
    for (const [tool, input] of [
      ['Bash', { command: 'npm test' }],
      ['Bash', { command: 'git push origin main' }],
      ['Bash', { command: 'ls > out.txt' }],
      ['Write', { file_path: 'src/b.ts', content: 'x' }],
      ['Write', { file_path: 'src/locked/b.ts', content: 'x' }],
      ['Write', { file_path: '.keel/settings.json', content: '{}' }],
    ] as const) {
      const { outcome, asked } = await decide('plan', tool, input);
      expect(outcome.decision, JSON.stringify(input)).toBe('deny');
      expect(asked, JSON.stringify(input)).toEqual([]);
    }
  });

  it('the engine alone agrees with the machine (an ask rule does not turn a change into a question)', async () => {
    fx = await makeFixture(settings);
    expect((await fx.bash('git push origin main', 'plan')).decision).toBe('deny');
    expect((await fx.decide('Write', { file_path: 'src/locked/b.ts', content: 'x' }, 'plan')).decision).toBe('deny');
    expect((await fx.bash('git status', 'plan')).decision).toBe('allow');
  });
});

describe('explainPermission reports what a run would do, asking nobody', () => {
  it('reports ask with the rule where a run asks, and the engine\'s words where it decides', async () => {
    fx = await makeFixture(settings);
    const services = { workspace: fx.ws, tools: createToolRegistry(), permissions: fx.engine };
    expect(await explainPermission(services, { tool: 'Bash', input: { command: 'git push origin main' }, mode: 'default' })).toMatchObject({ decision: 'ask', rule: 'Bash(git push:*)' });
    expect(await explainPermission(services, { tool: 'Bash', input: { command: 'git status; rm -rf /' }, mode: 'default' })).toMatchObject({ decision: 'deny', rule: 'Bash(rm:*)', reason: 'denied by Bash(rm:*)' });
    expect(await explainPermission(services, { tool: 'Bash', input: { command: 'npm test' }, mode: 'plan' })).toMatchObject({ decision: 'deny', reason: 'plan mode allows read-only tools only' });
    expect(await explainPermission(services, { tool: 'Write', input: { file_path: 'x' }, mode: 'default' })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/^invalid call/) });
    expect(await explainPermission(services, { tool: 'Nope', input: {}, mode: 'default' })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/unknown tool/) });
  });

  it('matches the run path for every call in every mode', async () => {
    fx = await makeFixture(settings);
    const services = { workspace: fx.ws, tools: createToolRegistry(), permissions: fx.engine };
    const calls: [string, Record<string, unknown>][] = [
      ['Bash', { command: 'git status' }],
      ['Bash', { command: 'npm test' }],
      ['Bash', { command: 'npm publish' }],
      ['Bash', { command: 'git push' }],
      ['Bash', { command: 'rm x' }],
      ['Bash', { command: 'cat /etc/hostname' }],
      ['Bash', { command: 'echo x > notes.txt' }],
      ['Write', { file_path: 'src/b.ts', content: 'x' }],
      ['Write', { file_path: 'README.md', content: 'x' }],
      ['Write', { file_path: '.git/config', content: 'x' }],
      ['Read', { file_path: 'src/a.ts' }],
      ['Read', { file_path: '/etc/hostname' }],
      ['WebFetch', { url: 'https://example.com/', prompt: 'x' }],
    ];
    for (const mode of ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const) {
      for (const [tool, input] of calls) {
        const explained = await explainPermission(services, { tool, input, mode });
        const { outcome, asked } = await decide(mode, tool, input);
        const ran = asked.length > 0 ? 'ask' : outcome.decision;
        expect(explained.decision, `${mode} ${tool} ${JSON.stringify(input)}`).toBe(ran);
      }
    }
  });
});
