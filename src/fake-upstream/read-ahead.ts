import type { Socket } from 'node:net';
import type { Clock } from '../engine/clock.js';

/**
 * What a connection sends while it waits to be handed to the HTTP server: read as it comes, kept,
 * and given to the server's own listeners at hand-over, as if it came then. Reading ahead costs
 * a read and a push per chunk, not the parse and the request; it tells when the first request's
 * bytes arrived (`firstAt`), which the server's time to first token counts from. Past `maxBytes`
 * kept the socket is paused (what follows waits in the kernel, as it did before it was read).
 */
export class ReadAhead {
  /** When the first chunk arrived (the clock's ms), -1 before. */
  firstAt = -1;
  /** The client ended its side meanwhile. */
  ended = false;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly socket: Socket,
    private readonly clock: Clock,
    private readonly maxBytes: number,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
  }

  /** Stops reading ahead: the listeners go (the HTTP server's take over), what was kept stays for `replay`. */
  stop(): void {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
  }

  /** Gives what was kept to the socket's `data` listeners now, in order. */
  replay(): void {
    for (const chunk of this.chunks.splice(0)) this.socket.emit('data', chunk);
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.firstAt < 0) this.firstAt = this.clock.now();
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes >= this.maxBytes) this.socket.pause();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
  };
}
