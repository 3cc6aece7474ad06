import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { providerStreamActor } from '../../../src/core/machines/stream/actors';
import { streamMachine } from '../../../src/core/machines/stream/stream.machine';
import type { EmitProviderEvent, ModelProvider, ProviderEvent } from '../../../src/core/providers/types';

/**
 * The provider-stream actor feeding the real stream machine. The provider delivers its events in
 * bursts, one burst per turn of the event loop, as a network does; views must get at most one text
 * update per block per turn, in order, before whatever follows the block.
 */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

const text = (index: number, t: string): ProviderEvent => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
const BURSTS: ProviderEvent[][] = [
  [{ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 1 } } }, { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
  [{ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }, { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }],
  [{ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }, { type: 'content_block_stop', index: 0 }, { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, text(1, 'Hel'), text(1, 'lo')],
  [text(1, ', wor'), text(1, 'ld')],
  [text(1, '!'), { type: 'content_block_stop', index: 1 }],
  [{ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 't1', name: 'Read', input: {} } }, { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"file_path":' } }],
  [{ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"a.txt"}' } }, { type: 'content_block_stop', index: 2 }],
  [{ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }, { type: 'message_stop' }],
];

/** Pushes (streamTo) or yields (stream) each burst on its own turn of the event loop. */
function provider(push: boolean): ModelProvider {
  async function* pull(): AsyncGenerator<ProviderEvent> {
    for (const burst of BURSTS) {
      await turn();
      yield* burst;
    }
  }
  const p: ModelProvider = { id: 'scripted', label: 'bursts', stream: () => pull() };
  if (push) {
    p.streamTo = async (_request, _signal, emit: EmitProviderEvent) => {
      for (const burst of BURSTS) {
        await turn();
        for (const e of burst) emit(e);
      }
    };
  }
  return p;
}

async function run(push: boolean) {
  const seen: TaskEvent[] = [];
  const machine = streamMachine.provide({
    actors: { providerStream: providerStreamActor(() => provider(push), undefined, (e) => seen.push(e)) },
    actions: { publish: (_: unknown, e: TaskEvent | null) => void (e && seen.push(e)) },
  });
  const actor = createActor(machine, { input: { taskId: 't', request: { model: 'm', system: [], messages: [], tools: [], maxTokens: 100 } } });
  const done = new Promise<void>((r) => actor.subscribe({ complete: () => r() }));
  actor.start();
  await done;
  return { seen, output: actor.getSnapshot().output };
}

describe('a block the stream never started (issue 26 item 11)', () => {
  it.each([
    ['a delta before any block', [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'stray' } }], 'a delta of content block 0'],
    ['a delta of another block', [{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, text(0, 'ok'), text(3, 'stray')], 'a delta of content block 3'],
    ['the end of a block never started', [{ type: 'content_block_stop', index: 2 }], 'the end of content block 2'],
  ] as const)('%s: the answer fails as malformed, and the stray text is never shown', async (_what, events, said) => {
    const burst: ProviderEvent[] = [{ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 1 } } }, ...(events as readonly ProviderEvent[])];
    const p: ModelProvider = {
      id: 'scripted',
      label: 'protocol error',
      stream: async function* () {
        await turn();
        yield* burst;
        yield { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } };
        yield { type: 'message_stop' };
      },
    };
    const seen: TaskEvent[] = [];
    const machine = streamMachine.provide({
      actors: { providerStream: providerStreamActor(() => p, undefined, (e) => seen.push(e)) },
      actions: { publish: (_: unknown, e: TaskEvent | null) => void (e && seen.push(e)) },
    });
    const actor = createActor(machine, { input: { taskId: 't', request: { model: 'm', system: [], messages: [], tools: [], maxTokens: 100 } } });
    const done = new Promise<void>((r) => actor.subscribe({ complete: () => r() }));
    actor.start();
    await done;
    expect(actor.getSnapshot().output).toMatchObject({ ok: false, error: { code: 'malformed_response', retryable: true, message: expect.stringContaining(`sent ${said}, which it never started`) } });
    expect(seen.filter((e) => e.type === 'text' && e.delta.includes('stray'))).toEqual([]);
  });
});

describe('provider-stream actor', () => {
  it.each([true, false])('push=%s: views get one update per block per turn, in order; the machine assembles the whole message', async (push) => {
    const { seen, output } = await run(push);
    const visible = seen.filter((e) => e.type === 'text' || e.type === 'thinking' || e.type === 'stream').map((e) => (e.type === 'stream' ? `[${e.mode}]` : `${e.type}:${e.delta}`));
    expect(visible).toEqual(['[requesting]', '[thinking]', 'thinking:Let me think.', '[responding]', 'text:Hello', 'text:, world', 'text:!', '[toolInput]']);
    expect(output).toMatchObject({
      ok: true,
      stopReason: 'tool_use',
      message: {
        content: [
          { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
          { type: 'text', text: 'Hello, world!' },
          { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a.txt' } },
        ],
      },
    });
  });
});
