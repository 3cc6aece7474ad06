import type { EngineDecision } from '../permissions/engine';
import type { PermissionAnswer, PermissionAsker } from '../permissions/gate';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../providers/types';
import type { PermissionDecider } from '../runtime/permissionCheck';
import { createToolRegistry, type ToolRegistry } from '../tools/registry';
import type { AnyTool, ToolResult } from '../tools/types';
import { conversationKey, type RecordedCall, type Recording } from './recording';

/**
 * The services a replay runs a task's machines with: the real interfaces (ModelProvider,
 * ToolRegistry, PermissionDecider, PermissionAsker), answered from recordings instead of a model,
 * the tools, the rules and the person. Nothing is patched: the machines cannot tell.
 */

/**
 * A model that answers each request with what was recorded for the same conversation (the task's
 * and its sub-agents' logs together; a conversation asked twice — a retry — gets its recorded
 * attempts in order). A request nobody recorded ends in a non-retryable `provider_error`, which
 * the comparison then shows as the first difference.
 */
export class RecordedModel implements ModelProvider {
  readonly id = 'anthropic' as const;
  readonly label = 'recorded model';
  private readonly calls = new Map<string, RecordedCall[]>();

  constructor(recordings: Recording[]) {
    for (const r of recordings) for (const [key, q] of r.calls) this.calls.set(key, [...(this.calls.get(key) ?? []), ...q]);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    const { events, hang } = this.play(request);
    for (const e of events) {
      if (signal.aborted) break;
      yield e;
    }
    // A request the run was stopped in the middle of: it goes on until this one is stopped too.
    if (hang && !signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    if (signal.aborted) yield { type: 'provider_error', error: { code: 'cancelled', message: 'The request was cancelled.', phase: 'mid-stream', retryable: false } };
  }

  private play(request: ProviderRequest): { events: ProviderEvent[]; hang: boolean } {
    const call = this.calls.get(conversationKey(request.messages))?.shift();
    if (!call) {
      const error = { code: 'internal' as const, message: 'Replay: no recorded model response for this conversation.', phase: 'pre-stream' as const, retryable: false };
      return { events: [{ type: 'provider_error', error }], hang: false };
    }
    if (call.kind === 'cut') return { events: partialEvents(call), hang: true };
    return { events: this.answer(call), hang: false };
  }

  private answer(call: Exclude<RecordedCall, { kind: 'cut' }>): ProviderEvent[] {
    if (call.kind === 'failure') {
      const events: ProviderEvent[] = [];
      if (call.started) {
        events.push({ type: 'message_start', message: { id: call.started.messageId, model: call.started.model, usage: {} } });
        if (call.partialText) {
          events.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
          events.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: call.partialText } });
        }
      }
      const phase = call.started ? 'mid-stream' : 'pre-stream';
      // The recorded wait is handed back as the server's retry-after, so the replay waits as the run did.
      const wait = call.delayMs !== undefined ? { retryAfterMs: call.delayMs } : {};
      events.push({ type: 'provider_error', error: { code: call.code, message: call.message, phase, retryable: call.retryable, ...wait } });
      return events;
    }
    const u = call.usage;
    const usage = { input_tokens: u.inputTokens, cache_read_input_tokens: u.cacheReadTokens, cache_creation_input_tokens: u.cacheWriteTokens };
    const events: ProviderEvent[] = [{ type: 'message_start', message: { id: call.messageId, model: call.model, usage: { ...usage, output_tokens: 0 } } }];
    call.content.forEach((b, index) => {
      if (b.type === 'text') {
        events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
      } else if (b.type === 'thinking') {
        events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } });
        events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
      } else if (b.type === 'redacted_thinking') {
        events.push({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: b.data } });
      } else {
        events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
      }
      events.push({ type: 'content_block_stop', index });
    });
    events.push({ type: 'message_delta', delta: { stop_reason: call.stopReason }, usage: { ...usage, output_tokens: u.outputTokens } }, { type: 'message_stop' });
    return events;
  }
}

/** What a cut-off answer had streamed when the run was stopped, as the provider sent it: its start, each block it opened, their deltas. */
function partialEvents(call: Extract<RecordedCall, { kind: 'cut' }>): ProviderEvent[] {
  if (!call.started) return [];
  const events: ProviderEvent[] = [{ type: 'message_start', message: { id: call.started.messageId, model: call.started.model, usage: {} } }];
  let index = -1;
  for (const step of call.steps) {
    if (step.kind === 'block') {
      if (index >= 0) events.push({ type: 'content_block_stop', index });
      index++;
      const block =
        step.mode === 'thinking'
          ? ({ type: 'thinking', thinking: '', signature: '' } as const)
          : step.mode === 'toolInput'
            ? ({ type: 'tool_use', id: `toolu_cut_${index}`, name: 'cut_off', input: {} } as const)
            : ({ type: 'text', text: '' } as const);
      events.push({ type: 'content_block_start', index, content_block: block });
    } else if (index >= 0) {
      events.push({ type: 'content_block_delta', index, delta: step.kind === 'text' ? { type: 'text_delta', text: step.text } : { type: 'thinking_delta', thinking: step.text } });
    }
  }
  return events;
}

/**
 * The real tools (same names, schemas, permission subjects), whose `invoke` returns what the
 * recorded call returned — its live output chunks included — instead of running anything.
 */
export function recordedTools(real: ToolRegistry, recordings: Recording[]): ToolRegistry {
  const results = new Map(recordings.flatMap((r) => [...r.tools]));
  const byInput = new Map<string, string[]>();
  const byName = new Map<string, string[]>();
  for (const r of recordings) {
    for (const e of r.events) {
      if (e.type !== 'tool_call') continue;
      const key = `${e.name}\u0000${JSON.stringify(e.input)}`;
      byInput.set(key, [...(byInput.get(key) ?? []), e.id]);
      byName.set(e.name, [...(byName.get(e.name) ?? []), e.id]);
    }
  }
  const used = new Set<string>();
  const take = (ids: string[] | undefined) => {
    const id = ids?.find((x) => !used.has(x));
    if (id) used.add(id);
    return id;
  };
  const tools = real.names().map((name): AnyTool => {
    const tool = real.get(name)!;
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      readOnly: tool.readOnly,
      subject: (input, ctx) => tool.subject(input, ctx),
      invoke: async (input, ctx): Promise<ToolResult> => {
        // The call is found by its name and input, in the order recorded (the tool is not told its
        // id); failing that (a schema that fills in defaults), by its name alone, in order.
        const id = take(byInput.get(`${name}\u0000${JSON.stringify(input)}`)) ?? take(byName.get(name));
        const rec = id ? results.get(id) : undefined;
        if (!rec) return { content: 'Replay: this tool call was not recorded.', isError: true, summary: 'not recorded' };
        for (const chunk of rec.outputs) ctx.onOutput(chunk);
        // Still running when the run was stopped: it runs on until the replay stops it too.
        if (rec.cut) {
          if (!ctx.signal.aborted) await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          return { content: 'Replay: this tool call was stopped.', isError: true, summary: 'stopped' };
        }
        return { content: rec.content, isError: rec.isError, summary: rec.summary };
      },
    };
  });
  return createToolRegistry(tools);
}

/**
 * The engine's recorded decisions, in order (a replay checks permissions in the order the run
 * did). One check may ask the engine more than once about the same call — a sub-agent's call is
 * also decided as its parent would — so a call already decided gets the same decision again.
 */
export function recordedDecisions(recording: Recording): PermissionDecider {
  const queue = [...recording.decisions];
  const decided = new WeakMap<object, EngineDecision>();
  return {
    playback: true,
    // A replayed tool answers from the recording: it searches nothing.
    searchExclusions: async () => null,
    async decide(call): Promise<EngineDecision> {
      const again = decided.get(call);
      if (again) return again;
      const d = queue.shift() ?? { decision: 'deny' as const, reason: 'Replay: no recorded permission decision' };
      decided.set(call, d);
      return d;
    },
  };
}

/** The person's recorded answers, by tool call id. */
export function recordedAnswers(recordings: Recording[]): PermissionAsker {
  const answers = new Map(recordings.flatMap((r) => [...r.answers]));
  return {
    async ask(request): Promise<PermissionAnswer> {
      return answers.get(request.toolCallId) ?? { decision: 'deny', feedback: 'Replay: no recorded answer' };
    },
  };
}
