import { Duplex } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';

/**
 * The host's end of a worker's channel when the spawner thread holds the real socket
 * (processLauncher.ts): a Duplex whose bytes cross a `MessagePort` to the thread, which writes
 * them to the worker's inherited socket and sends back what the worker wrote.
 *
 * Why a relay: the channel is a socketpair created by `spawn` (stdio fd 3), so no other process
 * can connect to it — but `spawn` runs on the spawner thread (it blocks the thread that calls
 * it), and a socket cannot move between threads. The port is private to this process.
 *
 * Contract, as a `net.Socket` between two processes: bytes arrive in order; `write`'s callback
 * runs once the thread handed them to the socket (so back-pressure reaches the writer); `pause`
 * stops the thread reading (the worker's writes back up in its own memory); the stream ends when
 * the worker closes its end, and closes (`'close'`) once both sides are done or on `destroy`.
 * Nothing here throws into the port's events.
 */
export type PortToThread =
  | { t: 'write'; chunks: Uint8Array[] }
  | { t: 'end' }
  | { t: 'destroy' }
  | { t: 'pause' }
  | { t: 'resume' };

export type PortFromThread = { t: 'data'; chunk: Uint8Array } | { t: 'written' } | { t: 'end' } | { t: 'close' } | { t: 'error'; message: string };

export class PortStream extends Duplex {
  /** Write callbacks waiting for the thread's `written`, in order. */
  private readonly unacked: ((err?: Error | null) => void)[] = [];
  private portClosed = false;
  private readingPaused = false;

  constructor(private readonly port: MessagePort) {
    super({ allowHalfOpen: false });
    port.on('message', (m: PortFromThread) => this.fromThread(m));
    port.on('close', () => this.onPortClosed());
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.toThread({ t: 'write', chunks: [chunk] }, callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (err?: Error | null) => void): void {
    this.toThread({ t: 'write', chunks: chunks.map((c) => c.chunk) }, callback);
  }

  override _read(): void {
    if (!this.readingPaused) return;
    this.readingPaused = false;
    this.post({ t: 'resume' });
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.post({ t: 'end' });
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.post({ t: 'destroy' });
    this.failUnacked(err ?? new Error('the worker channel was closed'));
    this.closePort();
    callback(err);
  }

  private toThread(message: PortToThread, callback: (err?: Error | null) => void): void {
    if (this.portClosed) return callback(new Error('the worker channel is closed'));
    this.unacked.push(callback);
    this.post(message);
  }

  private fromThread(m: PortFromThread): void {
    switch (m.t) {
      case 'data':
        if (!this.push(Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength)) && !this.readingPaused) {
          this.readingPaused = true;
          this.post({ t: 'pause' });
        }
        return;
      case 'written':
        this.unacked.shift()?.();
        return;
      case 'end':
        this.push(null);
        return;
      case 'error':
        this.destroy(new Error(m.message));
        return;
      case 'close':
        this.onPortClosed();
        return;
    }
  }

  /**
   * The thread let go of the socket (the worker's end closed, or the thread stopped). What the
   * worker wrote before that and this end has not yet read stays readable: the stream ends after
   * it, then closes (as a socket whose peer closed does) — destroying it here dropped the lines a
   * paused reader still had queued, the last a dying worker said.
   */
  private onPortClosed(): void {
    if (this.portClosed) return;
    this.closePort();
    this.failUnacked(new Error('the worker channel was closed'));
    this.push(null);
  }

  private failUnacked(err: Error): void {
    for (const cb of this.unacked.splice(0)) cb(err);
  }

  private post(message: PortToThread): void {
    if (this.portClosed) return;
    try {
      this.port.postMessage(message);
    } catch {
      // The port closed under us: `onPortClosed` follows.
    }
  }

  private closePort(): void {
    if (this.portClosed) return;
    this.portClosed = true;
    this.port.close();
  }
}

/**
 * The thread's half, as plain JavaScript for the spawner thread's program (processLauncher.ts:
 * the thread runs eval'd source). `relay(socket, port)` pumps the worker's socket to the port and
 * the port's messages to the socket, until either closes.
 */
export const RELAY_SOURCE = `
function relay(socket, port) {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try { port.postMessage({ t: 'close' }); } catch {}
    port.close();
    socket.destroy();
  };
  socket.on('data', (chunk) => { if (!closed) port.postMessage({ t: 'data', chunk }); });
  socket.on('end', () => { if (!closed) port.postMessage({ t: 'end' }); });
  socket.on('error', (err) => { if (!closed) port.postMessage({ t: 'error', message: String(err && err.message) }); });
  socket.on('close', close);
  port.on('close', close);
  port.on('message', (m) => {
    if (closed) return;
    switch (m.t) {
      case 'write': {
        const last = m.chunks.length - 1;
        m.chunks.forEach((c, i) => socket.write(c, i === last ? () => { if (!closed) port.postMessage({ t: 'written' }); } : undefined));
        if (last < 0) port.postMessage({ t: 'written' });
        return;
      }
      case 'end': socket.end(); return;
      case 'destroy': close(); return;
      case 'pause': socket.pause(); return;
      case 'resume': socket.resume(); return;
    }
  });
}
`;
