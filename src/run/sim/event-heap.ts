import type { EventHandler, Scheduler } from '../../upstream/scheduler.js';

/** Fixed-delay lanes (see `EventHeap`). A few cover a scenario's constant delays; more cost a scan per event. */
const LANES = 8;
/** Delays this close (ms) share a lane: `(now + d) − now` can differ from `d` in the last bits. */
const LANE_TOLERANCE = 1e-6;
/** Events go to the heap while it holds fewer than this; lanes pay off for larger queues. */
const HEAP_FIRST = 32;

/**
 * The simulator's event queue, ordered by (time, sequence) so ties fire in the order they
 * were scheduled. An event is four numbers — time, handler index, kind, id — and scheduling
 * allocates nothing once the arrays have grown. Since (time, sequence) is unique, any correct
 * queue fires the same events in the same order; this one is built for speed (the queue was
 * a third of a naive run's time: ~1.8 events per upstream attempt, thousands pending):
 *
 * - **Fixed-delay lanes.** Most events are scheduled a constant delay ahead of now — the
 *   upstream's 1 ms network time, a naive policy's 100 ms / 200 ms backoff, a layer's
 *   timeout, the arrival gap. Events scheduled `d` ahead of a clock that never goes back come
 *   in (time, sequence) order already, so a FIFO per delay is sorted for free: O(1) in and
 *   out, no sifting. An event joins the lane keyed by its delay (if not earlier than the
 *   lane's tail, which a constant delay never is); a delay that recurs (one of the last two
 *   that found no lane) claims an empty lane; anything else goes to the heap. So one-off
 *   delays (service times, jittered backoff) cost a short scan and otherwise use the heap.
 * - **A 4-ary heap** for the rest, and for everything while it holds under `HEAP_FIRST`
 *   events (a small heap is cheaper than a lane): log₄ n levels, `pop` sinks a hole instead
 *   of swapping, and only time, sequence and a slot number move; the payload (handler, kind,
 *   id) sits in slot-indexed arrays, read once when the event fires.
 *
 * The next event is the least of the heap's top and the lanes' heads.
 */
export class EventHeap implements Scheduler {
  // Heap, by position.
  private times = new Float64Array(1024);
  private seqs = new Float64Array(1024);
  private slots = new Int32Array(1024);
  private size = 0;
  // Payload by slot, and the free slots (a stack).
  private handlers = new Int32Array(1024);
  private kinds = new Int32Array(1024);
  private ids = new Int32Array(1024);
  private free = new Int32Array(1024);
  private freeTop = 0;
  // Lanes: a delay key and a ring of (time, seq, slot) each; the head's time and seq are
  // copied into `headTime`/`headSeq` (Infinity when empty) so picking the next event scans
  // two small arrays.
  private readonly laneKey = new Float64Array(LANES).fill(-1);
  private readonly headTime = new Float64Array(LANES).fill(Infinity);
  private readonly headSeq = new Float64Array(LANES);
  private readonly tailTime = new Float64Array(LANES);
  private readonly laneHead = new Int32Array(LANES);
  private readonly laneLen = new Int32Array(LANES);
  private readonly laneTimes: Float64Array[] = [];
  private readonly laneSeqs: Float64Array[] = [];
  private readonly laneSlots: Int32Array[] = [];
  /** The last two delays that went to the heap (-1: none). */
  private miss0 = -1;
  private miss1 = -1;
  /** Lanes keyed so far: only these are scanned (a run uses few). */
  private lanes = 0;
  private queued = 0;
  private seq = 0;
  private t = 0;
  private readonly registry: EventHandler[] = [];
  /** Events fired so far. */
  fired = 0;

  constructor() {
    for (let s = 1023; s >= 0; s--) this.free[this.freeTop++] = s;
    for (let k = 0; k < LANES; k++) {
      this.laneTimes.push(new Float64Array(64));
      this.laneSeqs.push(new Float64Array(64));
      this.laneSlots.push(new Int32Array(64));
    }
  }

  now(): number {
    return this.t;
  }

  /** Events waiting to fire. */
  get pending(): number {
    return this.queued;
  }

  register(handler: EventHandler): number {
    this.registry.push(handler);
    return this.registry.length - 1;
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (this.freeTop === 0) this.growSlots();
    const slot = this.free[--this.freeTop];
    this.handlers[slot] = handler;
    this.kinds[slot] = kind;
    this.ids[slot] = id;
    const time = Math.max(at, this.t);
    const seq = this.seq++;
    this.queued++;
    // A small heap is cheaper than a lane (a few levels, no scan): lanes only take the overflow.
    const lane = this.size < HEAP_FIRST ? -1 : this.laneFor(time - this.t, time);
    if (lane >= 0) this.lanePush(lane, time, seq, slot);
    else this.heapPush(time, seq, slot);
  }

  /** Time of the next event, Infinity when none. */
  peekTime(): number {
    let best = this.size > 0 ? this.times[0] : Infinity;
    for (let k = 0; k < this.lanes; k++) if (this.headTime[k] < best) best = this.headTime[k];
    return best;
  }

  /**
   * Fires events in order until the next one is later than `until` (or none is left), or
   * `limit` events have fired; returns how many fired. `advance` false keeps the clock at the
   * last event fired instead of moving it on to `until`: a real-time caller that looks a little
   * ahead (a timer may fire early) must not push events scheduled for "now" to that horizon.
   */
  runUntil(until: number, limit = Infinity, advance = true): number {
    const registry = this.registry;
    const headTime = this.headTime;
    const headSeq = this.headSeq;
    let n = 0;
    while (this.queued > 0 && n < limit) {
      const lanes = this.lanes;
      // The least (time, seq) of the heap's top and the lanes' heads; -1 is the heap.
      let from = -1;
      let time = Infinity;
      let seq = 0;
      if (this.size > 0) {
        time = this.times[0];
        seq = this.seqs[0];
      }
      for (let k = 0; k < lanes; k++) {
        const ht = headTime[k];
        if (ht < time || (ht === time && headSeq[k] < seq)) {
          from = k;
          time = ht;
          seq = headSeq[k];
        }
      }
      if (time > until) break;
      const slot = from < 0 ? this.heapPop() : this.laneShift(from);
      const handler = this.handlers[slot];
      const kind = this.kinds[slot];
      const id = this.ids[slot];
      this.free[this.freeTop++] = slot;
      this.queued--;
      this.t = time;
      this.fired++;
      n++;
      registry[handler].handle(kind, id, time);
    }
    // Time moves on to `until` only while something is still to happen: once the queue is
    // empty the run is over, and its clock stays at its last event. Stopped by `limit`, it
    // stays at the last event fired (events up to `until` may still be waiting).
    if (advance && n < limit && until > this.t && until !== Infinity && this.queued > 0) this.t = until;
    return n;
  }

  /** The lane an event `delay` ahead, at `time`, joins; -1 for the heap. */
  private laneFor(delay: number, time: number): number {
    if (time === Infinity) return -1; // Infinity marks an empty lane's head
    const keys = this.laneKey;
    const lanes = this.lanes;
    let empty = -1;
    for (let k = 0; k < lanes; k++) {
      const key = keys[k];
      if (key - delay <= LANE_TOLERANCE && delay - key <= LANE_TOLERANCE) {
        if (this.laneLen[k] === 0 || time >= this.tailTime[k]) return k;
        return -1;
      }
      if (empty < 0 && this.laneLen[k] === 0) empty = k;
    }
    // A delay earns a lane when it recurs: it is one of the last two that went to the heap.
    // One-off delays (random service times, jitter) stay in the heap and leave lanes alone.
    if (!this.recent(delay)) return -1;
    if (empty < 0 && lanes < LANES) empty = this.lanes++;
    if (empty >= 0) keys[empty] = delay;
    return empty;
  }

  /** Whether `delay` is one of the last two delays that found no lane; remembers it. */
  private recent(delay: number): boolean {
    const a = this.miss0;
    const b = this.miss1;
    if (
      (a - delay <= LANE_TOLERANCE && delay - a <= LANE_TOLERANCE) ||
      (b - delay <= LANE_TOLERANCE && delay - b <= LANE_TOLERANCE)
    )
      return true;
    this.miss1 = a;
    this.miss0 = delay;
    return false;
  }

  private lanePush(k: number, time: number, seq: number, slot: number): void {
    let len = this.laneLen[k];
    let times = this.laneTimes[k];
    if (len === times.length) times = this.growLane(k);
    const at = (this.laneHead[k] + len) & (times.length - 1);
    times[at] = time;
    this.laneSeqs[k][at] = seq;
    this.laneSlots[k][at] = slot;
    this.laneLen[k] = ++len;
    this.tailTime[k] = time;
    if (len === 1) {
      this.headTime[k] = time;
      this.headSeq[k] = seq;
    }
  }

  /** Takes lane `k`'s head; returns its slot. */
  private laneShift(k: number): number {
    const head = this.laneHead[k];
    const slot = this.laneSlots[k][head];
    const len = --this.laneLen[k];
    if (len === 0) {
      this.headTime[k] = Infinity;
      return slot;
    }
    const next = (head + 1) & (this.laneTimes[k].length - 1);
    this.laneHead[k] = next;
    this.headTime[k] = this.laneTimes[k][next];
    this.headSeq[k] = this.laneSeqs[k][next];
    return slot;
  }

  private heapPush(time: number, seq: number, slot: number): void {
    if (this.size === this.times.length) this.growHeap();
    const times = this.times;
    const seqs = this.seqs;
    const slots = this.slots;
    let i = this.size++;
    // Sift up: a new event has the highest sequence, so it only passes strictly later times.
    while (i > 0) {
      const p = (i - 1) >> 2;
      if (times[p] <= time) break;
      times[i] = times[p];
      seqs[i] = seqs[p];
      slots[i] = slots[p];
      i = p;
    }
    times[i] = time;
    seqs[i] = seq;
    slots[i] = slot;
  }

  /** Removes the heap's top and returns its slot: the hole at the top sinks to where the last element fits. */
  private heapPop(): number {
    const times = this.times;
    const seqs = this.seqs;
    const slots = this.slots;
    const top = slots[0];
    const last = --this.size;
    if (last === 0) return top;
    const time = times[last];
    const seq = seqs[last];
    let i = 0;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= last) break;
      const end = Math.min(first + 4, last);
      let c = first;
      let ct = times[first];
      let cs = seqs[first];
      for (let k = first + 1; k < end; k++) {
        const kt = times[k];
        if (kt < ct || (kt === ct && seqs[k] < cs)) {
          c = k;
          ct = kt;
          cs = seqs[k];
        }
      }
      if (time < ct || (time === ct && seq < cs)) break;
      times[i] = ct;
      seqs[i] = cs;
      slots[i] = slots[c];
      i = c;
    }
    times[i] = time;
    seqs[i] = seq;
    slots[i] = slots[last];
    return top;
  }

  private growHeap(): void {
    const n = this.times.length * 2;
    this.times = copyF64(this.times, n);
    this.seqs = copyF64(this.seqs, n);
    this.slots = copyI32(this.slots, n);
  }

  /** Every slot is taken: double the payload arrays; the new slots are the free ones. */
  private growSlots(): void {
    const old = this.handlers.length;
    const n = old * 2;
    this.handlers = copyI32(this.handlers, n);
    this.kinds = copyI32(this.kinds, n);
    this.ids = copyI32(this.ids, n);
    this.free = new Int32Array(n);
    this.freeTop = 0;
    for (let s = n - 1; s >= old; s--) this.free[this.freeTop++] = s;
  }

  /** Doubles lane `k`'s ring, unrolled so its head is at 0 (sizes stay powers of two). */
  private growLane(k: number): Float64Array {
    const old = this.laneTimes[k];
    const n = old.length;
    const times = new Float64Array(n * 2);
    const seqs = new Float64Array(n * 2);
    const slots = new Int32Array(n * 2);
    const head = this.laneHead[k];
    for (let i = 0; i < n; i++) {
      const at = (head + i) & (n - 1);
      times[i] = old[at];
      seqs[i] = this.laneSeqs[k][at];
      slots[i] = this.laneSlots[k][at];
    }
    this.laneTimes[k] = times;
    this.laneSeqs[k] = seqs;
    this.laneSlots[k] = slots;
    this.laneHead[k] = 0;
    return times;
  }
}

function copyF64(a: Float64Array, n: number) {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function copyI32(a: Int32Array, n: number) {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
