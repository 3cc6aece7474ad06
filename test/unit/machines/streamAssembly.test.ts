import { describe, expect, it } from 'vitest';
import { applyDelta, assembleMessage, startBlock, stopBlock, type BuildingBlock } from '../../../src/core/machines/stream/assembly';

/** A tool_use block built from its JSON fragments as the stream machine builds it. */
function toolBlock(id: string, fragments: string[], stopped = true): BuildingBlock {
  let b = startBlock({ type: 'tool_use', id, name: 'Bash', input: {} });
  for (const partial_json of fragments) b = applyDelta(b, { type: 'input_json_delta', partial_json });
  return stopped ? stopBlock(b) : b;
}

describe('assembling tool calls', () => {
  it('keeps a call with valid input as it came', () => {
    const { message, truncatedToolUses, invalidToolUses } = assembleMessage([toolBlock('a', ['{"command":', '"ls"}'])]);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'a', name: 'Bash', input: { command: 'ls' } }]);
    expect([truncatedToolUses, invalidToolUses]).toEqual([[], []]);
  });

  it('keeps a call whose input is not a JSON object, with an empty input, and reports it as invalid', () => {
    const blocks = [toolBlock('bad', ['{"command": "rm -rf /"}}']), toolBlock('arr', ['[1, 2]'])];
    const { message, truncatedToolUses, invalidToolUses } = assembleMessage(blocks);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'bad', name: 'Bash', input: {} },
      { type: 'tool_use', id: 'arr', name: 'Bash', input: {} },
    ]);
    expect(truncatedToolUses).toEqual([]);
    expect(invalidToolUses.map((u) => u.id)).toEqual(['bad', 'arr']);
    expect(invalidToolUses[0]!.reason).toMatch(/not valid JSON.*the input was: \{"command": "rm -rf \/"\}\}/);
    expect(invalidToolUses[1]!.reason).toMatch(/not a JSON object/);
  });

  it('leaves out a call cut off by max_tokens or never stopped: it is truncated, not invalid', () => {
    const cut = assembleMessage([toolBlock('cut', ['{"command": "ec'])], true);
    expect(cut.message.content).toEqual([]);
    expect(cut.truncatedToolUses.map((u) => u.id)).toEqual(['cut']);
    expect(cut.invalidToolUses).toEqual([]);
    const open = assembleMessage([toolBlock('open', ['{"command": "ls"}'], false)]);
    expect(open.message.content).toEqual([]);
    expect(open.truncatedToolUses).toEqual([{ id: 'open', name: 'Bash', reason: 'input cut off before it was complete' }]);
  });
});
