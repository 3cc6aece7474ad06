import { assign, fromCallback, setup, type EventObject } from 'xstate';
import type { StreamMode, TaskEvent } from '../../../shared/domain/events';
import { ZERO_USAGE, type StopReason, type Usage } from '../../../shared/domain/messages';
import type { ProviderError, ProviderEvent, ProviderRequest } from '../../providers/types';
import { applyDelta, assembleMessage, mergeUsage, startBlock, stopBlock, type BuildingBlock, type StreamOutput } from './assembly';

/**
 * The stream machine follows one model response through the SSE grammar:
 * requesting → messageStart → processingBlocks (text | toolUse | thinking) → messageDelta →
 * messageStop, or failed from anywhere. Its UI mode is derived from its state. It does no I/O
 * itself: the `providerStream` actor feeds it the provider's events, with the deltas of a block
 * merged until the block's next other event, and publishes streamed text to views itself.
 */
export interface StreamInput {
  taskId: string;
  request: ProviderRequest;
}

interface StreamContext {
  taskId: string;
  request: ProviderRequest;
  messageId: string;
  model: string;
  blocks: BuildingBlock[];
  current: number;
  stopReason: StopReason | null;
  usage: Usage;
  error: ProviderError | null;
}

type ProviderStreamEvent = ProviderEvent;
type StreamEvent = ProviderStreamEvent;

type StartOf<T extends ProviderEvent['type']> = Extract<ProviderEvent, { type: T }>;

export const streamMachine = setup({
  types: {
    context: {} as StreamContext,
    events: {} as StreamEvent,
    input: {} as StreamInput,
    output: {} as StreamOutput,
  },
  actors: {
    /** Iterates the provider's stream and sends each event back. Provided by the runtime. */
    providerStream: fromCallback<EventObject, StreamInput>(({ sendBack }) => {
      sendBack({ type: 'provider_error', error: { code: 'internal', message: 'no provider wired', phase: 'connect', retryable: false } });
    }),
  },
  actions: {
    /** Publishes a task event to the outside world. Provided by the runtime; a no-op unwired. */
    publish: (_: unknown, _event: TaskEvent | null) => {},
    openBlock: assign(({ context, event }) => {
      const e = event as StartOf<'content_block_start'>;
      const blocks = context.blocks.slice();
      blocks[e.index] = startBlock(e.content_block);
      return { blocks, current: e.index };
    }),
    applyDelta: assign(({ context, event }) => {
      const e = event as StartOf<'content_block_delta'>;
      const block = context.blocks[e.index];
      if (!block) return {};
      const blocks = context.blocks.slice();
      blocks[e.index] = applyDelta(block, e.delta);
      return { blocks };
    }),
    closeBlock: assign(({ context, event }) => {
      const e = event as StartOf<'content_block_stop'>;
      const block = context.blocks[e.index];
      if (!block) return {};
      const blocks = context.blocks.slice();
      blocks[e.index] = stopBlock(block);
      return { blocks };
    }),
    recordDelta: assign(({ context, event }) => {
      const e = event as StartOf<'message_delta'>;
      return { stopReason: e.delta.stop_reason ?? context.stopReason, usage: mergeUsage(context.usage, e.usage) };
    }),
  },
  guards: {
    /** The delta's or stop's block was started (a `content_block_start` with its index came first). */
    blockStarted: ({ context, event }) => (event.type === 'content_block_delta' || event.type === 'content_block_stop') && context.blocks[event.index] !== undefined,
    isText: ({ event }) => event.type === 'content_block_start' && event.content_block.type === 'text',
    isThinking: ({ event }) =>
      event.type === 'content_block_start' && (event.content_block.type === 'thinking' || event.content_block.type === 'redacted_thinking'),
    isToolUse: ({ event }) => event.type === 'content_block_start' && event.content_block.type === 'tool_use',
  },
}).createMachine({
  id: 'stream',
  context: ({ input }) => ({
    taskId: input.taskId,
    request: input.request,
    messageId: '',
    model: input.request.model,
    blocks: [],
    current: -1,
    stopReason: null,
    usage: ZERO_USAGE,
    error: null,
  }),
  invoke: { id: 'providerStream', src: 'providerStream', input: ({ context }) => ({ taskId: context.taskId, request: context.request }) },
  initial: 'requesting',
  on: {
    provider_error: { target: '.failed', actions: assign({ error: ({ event }) => event.error }) },
    // A block's delta or end where no block was started (before any, or between blocks): the
    // stream broke the protocol. Never dropped silently: the answer fails, visibly, as malformed.
    content_block_delta: { target: '.failed', actions: assign({ error: ({ event }) => unstartedBlock(event.index, 'a delta') }) },
    content_block_stop: { target: '.failed', actions: assign({ error: ({ event }) => unstartedBlock(event.index, 'the end') }) },
    ping: {},
    // The answer is quiet: the person is told that Keel waits, and how long it still will.
    waiting: { actions: { type: 'publish', params: ({ context, event }) => ({ type: 'waiting', taskId: context.taskId, quietMs: event.quietMs, stallAfterMs: event.stallAfterMs }) } },
  },
  states: {
    requesting: {
      entry: { type: 'publish', params: ({ context }) => modeEvent(context.taskId, 'requesting') },
      on: {
        message_start: {
          target: 'messageStart',
          actions: [
            assign({
              messageId: ({ event }) => event.message.id,
              model: ({ event, context }) => event.message.model || context.model,
              usage: ({ event, context }) => mergeUsage(context.usage, event.message.usage),
            }),
            { type: 'publish', params: ({ event, context }) => ({ type: 'assistant_start', taskId: context.taskId, messageId: event.message.id, model: event.message.model || context.model }) },
          ],
        },
      },
    },
    messageStart: {
      on: {
        content_block_start: [
          { guard: 'isText', target: 'processingBlocks.text', actions: 'openBlock' },
          { guard: 'isThinking', target: 'processingBlocks.thinking', actions: 'openBlock' },
          { guard: 'isToolUse', target: 'processingBlocks.toolUse', actions: 'openBlock' },
        ],
        message_delta: { target: 'messageDelta', actions: 'recordDelta' },
      },
    },
    processingBlocks: {
      initial: 'between',
      on: {
        content_block_start: [
          { guard: 'isText', target: '.text', actions: 'openBlock' },
          { guard: 'isThinking', target: '.thinking', actions: 'openBlock' },
          { guard: 'isToolUse', target: '.toolUse', actions: 'openBlock' },
        ],
        // Text reaches views from the provider-stream actor as it arrives; here deltas only build the message.
        content_block_delta: [
          { guard: 'blockStarted', actions: 'applyDelta' },
          { target: '#stream.failed', actions: assign({ error: ({ event }) => unstartedBlock(event.index, 'a delta') }) },
        ],
        content_block_stop: [
          { guard: 'blockStarted', target: '.between', actions: 'closeBlock' },
          { target: '#stream.failed', actions: assign({ error: ({ event }) => unstartedBlock(event.index, 'the end') }) },
        ],
        message_delta: { target: 'messageDelta', actions: 'recordDelta' },
      },
      states: {
        between: {},
        text: { entry: { type: 'publish', params: ({ context }) => modeEvent(context.taskId, 'responding') } },
        thinking: { entry: { type: 'publish', params: ({ context }) => modeEvent(context.taskId, 'thinking') } },
        toolUse: { entry: { type: 'publish', params: ({ context }) => modeEvent(context.taskId, 'toolInput') } },
      },
    },
    messageDelta: {
      on: {
        message_delta: { actions: 'recordDelta' },
        message_stop: 'messageStop',
      },
    },
    messageStop: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }) => streamOutput(context),
});

/** The failure of a stream that sent part of a content block it never started (a protocol error; retryable like any malformed stream). */
function unstartedBlock(index: number, what: string): ProviderError {
  return {
    code: 'malformed_response',
    message: `The model's stream sent ${what} of content block ${index}, which it never started (a protocol error); this answer is not used.`,
    phase: 'mid-stream',
    retryable: true,
  };
}

/** A text or thinking delta as the task event views get (published by the provider-stream actor). */
export function deltaEvent(taskId: string, e: StartOf<'content_block_delta'>): TaskEvent | null {
  if (e.delta.type === 'text_delta') return { type: 'text', taskId, delta: e.delta.text };
  if (e.delta.type === 'thinking_delta') return { type: 'thinking', taskId, delta: e.delta.thinking };
  return null;
}

function modeEvent(taskId: string, mode: StreamMode): TaskEvent {
  return { type: 'stream', taskId, mode };
}

function streamOutput(context: StreamContext): StreamOutput {
  if (context.error || context.stopReason === null) {
    const err = context.error ?? { code: 'malformed_response' as const, message: 'The model stream ended without a stop reason.', phase: 'mid-stream' as const, retryable: true };
    const partialText = context.blocks.map((b) => (b?.type === 'text' ? b.text : '')).join('');
    return {
      ok: false,
      error: { code: err.code, message: err.message, retryable: err.retryable, phase: err.phase, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) },
      partialText,
      usage: context.usage,
    };
  }
  const blocks = context.blocks.filter((b): b is BuildingBlock => b !== undefined);
  const { message, truncatedToolUses, invalidToolUses } = assembleMessage(blocks, context.stopReason === 'max_tokens');
  return { ok: true, messageId: context.messageId, model: context.model, message, stopReason: context.stopReason, usage: context.usage, truncatedToolUses, invalidToolUses };
}

