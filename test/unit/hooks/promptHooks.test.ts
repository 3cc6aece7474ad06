import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fingerprintOf, hookSources, loadHooksConfig } from '../../../src/core/hooks/config';
import { HookRunner } from '../../../src/core/hooks/runner';
import { parsePromptAnswer, promptText, type PromptHookModel } from '../../../src/core/hooks/promptHook';
import { createPromptHookModel, promptHookModelId } from '../../../src/core/hooks/promptModel';
import type { HookInput } from '../../../src/core/hooks/types';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';
import { hookItem } from '../../../src/core/trust/items';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';

/**
 * Claude Code's `"type": "prompt"` hooks: configuration (events, fingerprint, approval text), the
 * prompt the model gets, how its answer is read and what each answer does per event, and the
 * model call (budget first, cost charged, the fast model on Anthropic).
 */
let workspace: string;
let home: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'keel-phooks-ws-'));
  home = mkdtempSync(join(tmpdir(), 'keel-phooks-home-'));
  mkdirSync(join(home, '.keel'), { recursive: true });
});

function userHooks(hooks: Record<string, unknown>): void {
  writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ hooks }));
}

function runner(): HookRunner {
  return new HookRunner({ workspace, trust: new WorkspaceTrust({ workspace, keelHome: join(home, '.keel'), home }), home, environment: () => ({}) });
}

const stop: HookInput = { hook_event_name: 'Stop', session_id: 't1', transcript_path: '', cwd: '/w', stop_hook_active: false, last_assistant_message: 'done' };
const pre: HookInput = { hook_event_name: 'PreToolUse', session_id: 't1', transcript_path: '', cwd: '/w', tool_name: 'Bash', tool_input: { command: 'rm -rf /' }, tool_use_id: 'c1' };
const prompt: HookInput = { hook_event_name: 'UserPromptSubmit', session_id: 't1', transcript_path: '', cwd: '/w', prompt: 'hi' };

/** A model that answers with the given texts in turn, and records what it was asked. */
function answering(...texts: string[]): PromptHookModel & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    ask: async ({ prompt: p }) => {
      asked.push(p);
      return { ok: true, text: texts.shift() ?? '' };
    },
  };
}

describe('prompt hooks: configuration', () => {
  it('reads a prompt hook on the events Claude Code allows, reports it elsewhere, and fingerprints its prompt', () => {
    userHooks({
      Stop: [{ hooks: [{ type: 'prompt', prompt: 'Are all tasks done? $ARGUMENTS', timeout: 20 }] }],
      SessionStart: [{ hooks: [{ type: 'prompt', prompt: 'x' }] }],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt' }, { type: 'agent', prompt: 'y' }] }],
    });
    const config = loadHooksConfig(hookSources(workspace, home));
    expect(config.hooks).toHaveLength(1);
    const h = config.hooks[0]!;
    expect(h).toMatchObject({ event: 'Stop', type: 'prompt', command: 'Are all tasks done? $ARGUMENTS', timeout: 20 });
    expect(config.problems.join('\n')).toMatch(/SessionStart.*"prompt" hooks run only on/);
    expect(config.problems.join('\n')).toMatch(/a prompt hook needs a "prompt"/);
    expect(config.problems.join('\n')).toMatch(/"agent" hooks .* not supported/);
    // The prompt text, the type and the model are what is approved: a change is a new hook.
    expect(fingerprintOf({ ...h, command: 'Are all tasks done?' })).not.toBe(h.fingerprint);
    expect(fingerprintOf({ ...h, model: 'opus' })).not.toBe(h.fingerprint);
    expect(fingerprintOf({ ...h, type: undefined })).not.toBe(h.fingerprint);
    // The approval shows the prompt in full, and that it is a priced model call.
    const item = hookItem(h, '.claude/settings.json', { workspace, home });
    expect(item.summary).toContain('Are all tasks done? $ARGUMENTS');
    expect(item.summary).toContain('priced request');
    expect(item.runs).toEqual([]);
  });
});

describe('prompt hooks: the prompt and the answer', () => {
  it('replaces $ARGUMENTS with the event JSON, or appends it', () => {
    expect(promptText('Check: $ARGUMENTS.', stop)).toBe(`Check: ${JSON.stringify(stop)}.`);
    expect(promptText('Check this', stop)).toBe(`Check this\n\n${JSON.stringify(stop)}`);
  });

  it('reads {"ok": …} (also fenced or after words), and anything else is an error', () => {
    expect(parsePromptAnswer('{"ok": true}')).toEqual({ ok: true });
    expect(parsePromptAnswer('Sure.\n```json\n{"ok": false, "reason": "tests not run"}\n```')).toEqual({ ok: false, reason: 'tests not run' });
    expect(parsePromptAnswer('{"ok": false}')).toMatchObject({ ok: false });
    expect(parsePromptAnswer('yes')).toHaveProperty('error');
    expect(parsePromptAnswer('{"ok": "yes"}')).toHaveProperty('error');
    expect(parsePromptAnswer('{"ok": tru')).toHaveProperty('error');
  });
});

describe('prompt hooks: what each answer does', () => {
  it('Stop: not ok blocks with the reason (the agent goes back to work); ok lets it stop', async () => {
    userHooks({ Stop: [{ hooks: [{ type: 'prompt', prompt: 'Done? $ARGUMENTS' }] }] });
    const model = answering('{"ok": false, "reason": "Run the tests first."}', '{"ok": true}');
    const r = runner();
    expect((await r.fire(stop, undefined, model)).block).toEqual({ reason: 'Run the tests first.' });
    const second = await r.fire(stop, undefined, model);
    expect(second.block).toBeUndefined();
    expect(second.errors).toEqual([]);
    expect(model.asked[0]).toContain('"last_assistant_message":"done"');
  });

  it('PreToolUse: not ok denies the call; UserPromptSubmit: not ok blocks the prompt', async () => {
    userHooks({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'Safe? $ARGUMENTS' }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'prompt', prompt: 'Allowed? $ARGUMENTS' }] }],
    });
    const r = runner();
    expect((await r.fire(pre, undefined, answering('{"ok": false, "reason": "destructive"}'))).permission).toEqual({ decision: 'deny', reason: 'destructive' });
    expect((await r.fire(prompt, undefined, answering('{"ok": false, "reason": "off topic"}'))).block).toEqual({ reason: 'off topic' });
  });

  it('an unreadable answer, a failed call or no model is a visible non-blocking error, never a decision', async () => {
    userHooks({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'Safe? $ARGUMENTS' }] }] });
    const r = runner();
    const garbled = await r.fire(pre, undefined, answering('I think it is fine'));
    expect(garbled.permission).toBeUndefined();
    expect(garbled.block).toBeUndefined();
    expect(garbled.errors.join('\n')).toMatch(/PreToolUse prompt hook .*did not answer with \{"ok"/);
    const failed = await r.fire(pre, undefined, { ask: async () => ({ ok: false, error: 'the model call failed: server said 500' }) });
    expect(failed.permission).toBeUndefined();
    expect(failed.errors.join('\n')).toContain('the model call failed: server said 500');
    const none = await r.fire(pre);
    expect(none.permission).toBeUndefined();
    expect(none.errors.join('\n')).toContain('no model is available');
  });

  it('is stopped at its timeout and the task goes on', async () => {
    userHooks({ Stop: [{ hooks: [{ type: 'prompt', prompt: 'Done?', timeout: 0.05 }] }] });
    const hanging: PromptHookModel = { ask: ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, error: 'aborted' }))) };
    const o = await runner().fire(stop, undefined, hanging);
    expect(o.block).toBeUndefined();
    expect(o.errors.join('\n')).toMatch(/was stopped at its timeout \(0\.05 s\)/);
  });
});

/** A provider that answers one text, reporting usage, and records each request. */
function provider(id: ModelProvider['id'], text: string, requests: ProviderRequest[]): ModelProvider {
  return {
    id,
    label: 'test',
    async *stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
      requests.push(request);
      yield { type: 'message_start', message: { id: 'm', model: request.model, usage: { input_tokens: 1000, output_tokens: 0 } } } as ProviderEvent;
      yield { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } as ProviderEvent;
      yield { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 10 } } as ProviderEvent;
      yield { type: 'message_stop' } as ProviderEvent;
    },
  };
}

describe('prompt hooks: the model call', () => {
  it('uses the fast model on Anthropic (or the hook\'s model), the task\'s model elsewhere', () => {
    expect(promptHookModelId({ id: 'anthropic' }, undefined, 'claude-opus-4-1')).toMatch(/haiku/);
    expect(promptHookModelId({ id: 'anthropic' }, 'sonnet', 'claude-opus-4-1')).toMatch(/sonnet/);
    expect(promptHookModelId({ id: 'openai-compatible' }, 'haiku', 'qwen2.5-coder')).toBe('qwen2.5-coder');
  });

  it('asks the budget first, charges what the server reported, and sends nothing when the budget has no room', async () => {
    const requests: ProviderRequest[] = [];
    const charged: number[] = [];
    const estimates: number[] = [];
    let room = true;
    const model = createPromptHookModel({
      taskId: 't1',
      provider: async () => provider('anthropic', '{"ok": true}', requests),
      taskModel: () => 'claude-sonnet-4-5',
      admit: async (estimateUsd) => {
        estimates.push(estimateUsd);
        return room ? null : { capUsd: 1, spentUsd: 1, estimateUsd };
      },
      charge: (_usage, usd) => charged.push(usd),
    });
    const signal = new AbortController().signal;
    expect(await model.ask({ system: 's', prompt: 'p', model: undefined, signal })).toEqual({ ok: true, text: '{"ok": true}' });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.model).toMatch(/haiku/);
    expect(estimates[0]).toBeGreaterThan(0);
    expect(charged).toHaveLength(1);
    expect(charged[0]).toBeGreaterThan(0);
    room = false;
    const refused = await model.ask({ system: 's', prompt: 'p', model: undefined, signal });
    expect(refused).toMatchObject({ ok: false });
    expect(refused.ok === false && refused.error).toMatch(/budget/);
    expect(requests).toHaveLength(1);
  });
});
