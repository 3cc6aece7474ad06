import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';

/**
 * An SDK transport whose `start()` may be called early and more than once (later calls return the
 * first call's promise). The connection machine opens the transport in its own state (`stdio`
 * spawns the process, `sse` opens the stream) before `initializing`, where the SDK's
 * `Client.connect` calls `start()` again. Everything else is passed through unchanged; this is
 * not a protocol implementation.
 */
export class StartedTransport implements Transport {
  private started: Promise<void> | null = null;

  constructor(
    private readonly inner: Transport,
    readonly kind: 'stdio' | 'streamableHttp' | 'sse' = 'stdio',
  ) {}

  start(): Promise<void> {
    this.started ??= this.inner.start();
    return this.started;
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get onclose(): (() => void) | undefined {
    return this.inner.onclose;
  }
  set onclose(f: (() => void) | undefined) {
    this.inner.onclose = f;
  }

  get onerror(): ((error: Error) => void) | undefined {
    return this.inner.onerror;
  }
  set onerror(f: ((error: Error) => void) | undefined) {
    this.inner.onerror = f;
  }

  get onmessage(): (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined {
    return this.inner.onmessage;
  }
  set onmessage(f: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined) {
    this.inner.onmessage = f;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }
}
