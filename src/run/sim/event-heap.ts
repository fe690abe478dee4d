import type { EventHandler, Scheduler } from '../../upstream/scheduler.js';

/**
 * The simulator's event queue: a binary min-heap over flat typed arrays, ordered by
 * (time, sequence) so ties fire in the order they were scheduled. An event is four numbers —
 * time, handler index, kind, id — so scheduling allocates nothing once the arrays have grown.
 */
export class EventHeap implements Scheduler {
  private times = new Float64Array(1024);
  private seqs = new Float64Array(1024);
  private handlers = new Int32Array(1024);
  private kinds = new Int32Array(1024);
  private ids = new Int32Array(1024);
  private size = 0;
  private seq = 0;
  private t = 0;
  private readonly registry: EventHandler[] = [];
  /** Events fired so far. */
  fired = 0;

  now(): number {
    return this.t;
  }

  get pending(): number {
    return this.size;
  }

  register(handler: EventHandler): number {
    this.registry.push(handler);
    return this.registry.length - 1;
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (this.size === this.times.length) this.grow();
    let i = this.size++;
    const time = at > this.t ? at : this.t;
    const seq = this.seq++;
    // Sift up.
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.times[p] < time || (this.times[p] === time && this.seqs[p] < seq)) break;
      this.move(p, i);
      i = p;
    }
    this.times[i] = time;
    this.seqs[i] = seq;
    this.handlers[i] = handler;
    this.kinds[i] = kind;
    this.ids[i] = id;
  }

  /** Time of the next event, Infinity when none. */
  peekTime(): number {
    return this.size > 0 ? this.times[0] : Infinity;
  }

  /** Fires events in order until the next one is later than `until` (or none is left). */
  runUntil(until: number): void {
    while (this.size > 0 && this.times[0] <= until) {
      const time = this.times[0];
      const handler = this.handlers[0];
      const kind = this.kinds[0];
      const id = this.ids[0];
      this.pop();
      this.t = time;
      this.fired++;
      this.registry[handler].handle(kind, id, time);
    }
    if (until > this.t && until !== Infinity) this.t = until;
  }

  private pop(): void {
    const last = --this.size;
    if (last === 0) return;
    const time = this.times[last];
    const seq = this.seqs[last];
    let i = 0;
    // Sift the last element down from the root.
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      let c = l;
      if (r < last && (this.times[r] < this.times[l] || (this.times[r] === this.times[l] && this.seqs[r] < this.seqs[l]))) c = r;
      if (time < this.times[c] || (time === this.times[c] && seq < this.seqs[c])) break;
      this.move(c, i);
      i = c;
    }
    this.move(last, i);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from];
    this.seqs[to] = this.seqs[from];
    this.handlers[to] = this.handlers[from];
    this.kinds[to] = this.kinds[from];
    this.ids[to] = this.ids[from];
  }

  private grow(): void {
    const n = this.times.length * 2;
    const g = <T extends Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.times = g(this.times, (k) => new Float64Array(k));
    this.seqs = g(this.seqs, (k) => new Float64Array(k));
    this.handlers = g(this.handlers, (k) => new Int32Array(k));
    this.kinds = g(this.kinds, (k) => new Int32Array(k));
    this.ids = g(this.ids, (k) => new Int32Array(k));
  }
}
