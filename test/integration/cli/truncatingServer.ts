import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback Anthropic endpoint for one thing the fake model server cannot script: an answer
 * cut off by max_tokens in the middle of a tool call's JSON input. The first request gets the
 * truncated Write call; later ones get a short text answer. Records the request bodies.
 */
const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

export async function startTruncatingServer(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const start = frame('message_start', { type: 'message_start', message: { id: `msg_${bodies.length}`, type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
    if (bodies.length === 1) {
      res.end(
        start +
          frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_cut', name: 'Write', input: {} } }) +
          frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"file_path": "never.txt", "content": "this should nev' } }) +
          frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
          frame('message_delta', { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 1024 } }) +
          frame('message_stop', { type: 'message_stop' }),
      );
      return;
    }
    res.end(
      start +
        frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'I will not retry that.' } }) +
        frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        frame('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } }) +
        frame('message_stop', { type: 'message_stop' }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
