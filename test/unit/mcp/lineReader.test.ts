import { describe, expect, it } from 'vitest';
import { idOfOversized, LineReader, type OversizedLine } from '../../../src/core/mcp/lineReader';

/** The stdio framing of MCP servers (issue 26 item 6): lines in linear time, a huge one never held. */
function read(max: number, chunks: (string | Buffer)[]): { lines: string[]; oversized: OversizedLine[] } {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const r = new LineReader(
    max,
    (l) => lines.push(l.toString('utf8')),
    (o) => oversized.push(o),
  );
  for (const c of chunks) r.push(typeof c === 'string' ? Buffer.from(c) : c);
  return { lines, oversized };
}

describe('LineReader', () => {
  it('splits lines whatever the chunks, keeps a partial line for the next chunk, skips empty lines', () => {
    expect(read(100, ['{"a":1}\n{"b"', ':2}\n\n{"c":3}\n{"d"'])).toEqual({ lines: ['{"a":1}', '{"b":2}', '{"c":3}'], oversized: [] });
    expect(read(100, ['x', 'y', 'z\n']).lines).toEqual(['xyz']);
  });

  it('a line past the limit is handed over cut (head, tail, full length), and the next line is read as usual', () => {
    const big = `{"result":{"content":[{"type":"text","text":"${'x'.repeat(300_000)}"}]},"jsonrpc":"2.0","id":42}`;
    const chunks: string[] = [];
    for (let i = 0; i < big.length; i += 65_536) chunks.push(big.slice(i, i + 65_536));
    const { lines, oversized } = read(100_000, [...chunks, '\n{"next":true}\n']);
    expect(lines).toEqual(['{"next":true}']);
    expect(oversized).toHaveLength(1);
    expect(oversized[0]!.bytes).toBe(big.length);
    expect(oversized[0]!.head.length).toBe(64 * 1024);
    expect(oversized[0]!.tail.toString()).toMatch(/"jsonrpc":"2.0","id":42}$/);
    expect(idOfOversized(oversized[0]!)).toBe(42);
  });

  it('the id of a cut message: at its start (Python servers) or its end (the TypeScript SDK); none when it names none', () => {
    const at = (head: string, tail: string) => idOfOversized({ head: Buffer.from(head), tail: Buffer.from(tail), bytes: 0 });
    expect(at('{"jsonrpc": "2.0", "id": "req-7", "result": {"content": [', 'xxxx"}]}}')).toBe('req-7');
    expect(at('{"result":{"content":[{"type":"text","text":"xxx', 'xxx"}]},"jsonrpc":"2.0","id":3}')).toBe(3);
    // An "id" inside the text is escaped, so it is not taken for the message's.
    expect(at('{"result":{"content":[{"type":"text","text":"xxx', 'xxx \\"id\\":9}"}]}}')).toBeUndefined();
  });
});
