import type { Clock } from '../engine/clock.js';

/**
 * Tells when connections wait in the kernel's listen queue: libuv accepts one connection per
 * loop turn, and the listening socket stays ready while more wait, so while a queue lasts every
 * turn accepts one. Every millisecond a turn then spends on requests is a millisecond the rest
 * of the burst waits there, a wait no one can count; accepted, a connection is read ahead and
 * its request timed from when its bytes came.
 *
 * A burst is `turns` loop turns in a row that each accepted a connection. While one lasts,
 * `holding()` is true, for at most `maxHoldMs` from when it began holding; it ends at the
 * first turn that accepts nothing (the queue is empty), and `onEnd` hears it (what was held
 * goes on). A burst that outlasts `maxHoldMs` (a steady stream of new connections as fast as the
 * server accepts: a client without keep-alive) holds nothing more until it ends.
 */
export class AcceptBursts {
  /** Connections accepted in this turn so far. */
  private accepts = 0;
  /** Turns in a row, up to the last one ended, that accepted a connection. */
  private streak = 0;
  private scheduled = false;
  /** When the hold under way began; -1 with none. */
  private heldSince = -1;
  /** The burst under way has held for `maxHoldMs` already. */
  private spent = false;
  private stopped = false;

  constructor(
    private readonly turns: number,
    private readonly maxHoldMs: number,
    private readonly clock: Clock,
    private readonly onEnd: () => void,
  ) {}

  /** A connection was accepted now. */
  accepted(): void {
    this.accepts++;
    this.endOfTurnNext();
  }

  /** Whether what the burst would delay waits now; if so, `onEnd` is called when the burst ends. */
  holding(): boolean {
    if (this.turns <= 0 || this.streak < this.turns || this.spent) return false;
    const now = this.clock.now();
    if (this.heldSince < 0) this.heldSince = now;
    if (now - this.heldSince < this.maxHoldMs) return true;
    this.spent = true;
    return false;
  }

  /** No more turns are watched (the server is closing). */
  stop(): void {
    this.stopped = true;
  }

  private endOfTurnNext(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(this.endOfTurn);
  }

  /** Runs after a turn's I/O (`setImmediate`): counts the turn in or ends the burst. */
  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    if (this.accepts > 0) {
      this.accepts = 0;
      this.streak++;
      this.endOfTurnNext();
      return;
    }
    // A spent hold began holding first, so heldSince tells whether this burst held at all.
    const held = this.heldSince >= 0;
    this.streak = 0;
    this.heldSince = -1;
    this.spent = false;
    if (held) this.onEnd();
  };
}
