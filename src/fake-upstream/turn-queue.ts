/**
 * Runs at most `perTurn` items per turn of the event loop, in arrival order: an item that comes
 * while this turn has room (and nothing waits) runs at once; the others wait and run on the turns
 * after (`setImmediate`, so due timers and I/O run in between). A turn's count starts over on the
 * next turn, so under light load every item runs at once and nothing is delayed.
 *
 * The fake upstream puts the work of a connection burst through these: 5,000 connections that
 * arrive (or close) together are set up (or torn down) a bounded batch per turn instead of in
 * one pass that holds the loop for hundreds of ms.
 */
export class TurnQueue<T> {
  private readonly queue: T[] = [];
  private head = 0;
  private ran = 0;
  private scheduled = false;

  constructor(
    private readonly perTurn: number,
    /** `waited`: the item was queued (it runs on a later turn than it came). */
    private readonly run: (item: T, waited: boolean) => void,
    /** Whether an item that waited is still worth running (a socket closed meanwhile is not). */
    private readonly live: (item: T) => boolean = () => true,
    /** Whether the next item may run at all now; while not, items wait until `kick()`. */
    private readonly ready: () => boolean = () => true,
  ) {}

  /** Items waiting for a later turn. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  /** Runs `item` now if this turn has room and nothing waits, else queues it; false if it waits. */
  push(item: T): boolean {
    const now = this.ran < this.perTurn && this.head === this.queue.length && this.ready();
    if (now) {
      this.ran++;
      this.run(item, false);
    } else this.queue.push(item);
    this.nextTurn();
    return now;
  }

  /** `ready()` may have turned true: what waits goes on in a later turn. */
  kick(): void {
    if (this.head < this.queue.length) this.nextTurn();
  }

  /** Empties the queue without running what waits, giving each item to `drop`. */
  clear(drop: (item: T) => void = () => {}): void {
    const items = this.queue.slice(this.head);
    this.queue.length = 0;
    this.head = 0;
    for (const item of items) drop(item);
  }

  private nextTurn(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.drain);
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    this.ran = 0;
    while (this.head < this.queue.length && this.ran < this.perTurn && this.ready()) {
      const item = this.queue[this.head++];
      if (!this.live(item)) continue;
      this.ran++;
      this.run(item, true);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // A queue that never empties lets go of what it ran.
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    // More wait (and may run), or this turn's count must start over next turn; items held back
    // by `ready()` wait for `kick()`.
    if ((this.head < this.queue.length && this.ready()) || this.ran > 0) this.nextTurn();
  };
}
