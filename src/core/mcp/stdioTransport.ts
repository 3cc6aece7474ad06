import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { deserializeMessage, SdkError, SdkErrorCode, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { idOfOversized, LineReader, type OversizedLine } from './lineReader';

/**
 * The stdio transport of an MCP server: the SDK's `StdioClientTransport`, with one difference
 * that matters — how stdout is read. The SDK keeps a server's output in one buffer that it grows
 * by copying for every chunk (a 20 MB result took seconds and past 10 MB it closed the
 * connection, so the server restarted and the model heard that it "stopped"). Here each message
 * is read in linear time up to `maxMessageBytes` (McpLimits: 64 MB), then parsed by the SDK
 * (`deserializeMessage`), and capped later like any result (MAX_MCP_OUTPUT_TOKENS). A message past
 * that size is never held: its request is answered with an error saying how big it was (a
 * JSON-RPC error response with the request's id), the server stays connected, and the next
 * message is read as usual.
 *
 * Process handling is the SDK's: the same default environment under the given one, stderr piped
 * (`stderr` exists before `start`), `close` ends stdin, waits 2 s, then SIGTERM, 2 s, SIGKILL.
 * The command is spawned without a shell (on Windows, as in Claude Code: `cmd /c npx …`).
 */
export interface StdioServerSpawn {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Messages longer than this (bytes) are answered with an error instead of being read (McpLimits). */
  maxMessageBytes: number;
}

export class KeelStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly stderr = new PassThrough();
  private process: ChildProcess | undefined;
  private readonly reader: LineReader;

  constructor(private readonly params: StdioServerSpawn) {
    this.reader = new LineReader(
      params.maxMessageBytes,
      (line) => this.message(line),
      (line) => this.oversized(line),
    );
  }

  start(): Promise<void> {
    if (this.process) throw new Error('KeelStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        env: { ...getDefaultEnvironment(), ...this.params.env },
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.process = undefined;
        this.reader.clear();
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.reader.push(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr);
    });
  }

  /** The server's pid once started. */
  get pid(): number | null {
    return this.process?.pid ?? null;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      const stdin = this.process?.stdin;
      if (!stdin) throw new SdkError(SdkErrorCode.NotConnected, 'Not connected');
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = undefined;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (ms: number) => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // Already closed.
    }
    await within(2000);
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGTERM');
      } catch {
        // Gone.
      }
      await within(2000);
    }
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // Gone.
      }
    }
    this.reader.clear();
  }

  /** One line: a message for the SDK; a line that is not JSON is skipped, as the SDK does. */
  private message(line: Buffer): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
    } catch (err) {
      if (err instanceof SyntaxError) return;
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.onmessage?.(message);
  }

  /** A message too big to read: its request gets an error that says so; nothing else changes. */
  private oversized(line: OversizedLine): void {
    const id = idOfOversized(line);
    const size = `${Math.round(line.bytes / 1024 / 1024)} MB`;
    const limit = `${Math.round(this.params.maxMessageBytes / 1024 / 1024)} MB`;
    const what = `the server sent a message of ${size}, more than Keel reads from one server message (${limit}); it was not read`;
    if (id === undefined) {
      this.onerror?.(new Error(`${what}, and it names no request`));
      return;
    }
    this.onmessage?.({ jsonrpc: '2.0', id, error: { code: -32603, message: `${what}. Ask the tool for less.` } });
  }
}
