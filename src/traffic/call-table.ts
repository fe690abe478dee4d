/**
 * Flat storage for calls in flight: one typed array per field, indexed by call id, ids reused
 * through a free list, arrays doubling as needed. No object per call on the hot path.
 */
export class CallTable {
  size = 0;
  layer = new Int32Array(0);
  parent = new Int32Array(0);
  /** The parent's attempt serial when this call was started: stale when it no longer matches. */
  parentSerial = new Int32Array(0);
  key = new Int32Array(0);
  attempts = new Int32Array(0);
  pending = new Int32Array(0);
  failCode = new Int32Array(0);
  /** Serial of the attempt in flight; 0 when none is. */
  serial = new Int32Array(0);
  reqId = new Int32Array(0);
  target = new Int32Array(0);
  /** 1 when a tool call under the attempt in flight answered in a degraded way (a draft, deferred). */
  degraded = new Int32Array(0);
  /** 1 when the call (or one below its attempt in flight) ran out of its stage's budget and returned what it had. */
  partial = new Int32Array(0);
  start = new Float64Array(0);
  deadline = new Float64Array(0);
  attemptStart = new Float64Array(0);
  tokens = new Float64Array(0);
  /** The root task (its number in arrival order) the call belongs to: tool intents are bound to it. */
  root = new Float64Array(0);
  prompt = new Float64Array(0);
  completion = new Float64Array(0);
  /** Streamed leaf calls: when the attempt in flight saw its first token (-1: not yet). */
  firstAt = new Float64Array(0);
  /** 1 when the call's answer holds a cut stream taken as complete (its own or a child's). */
  truncated = new Int32Array(0);
  /** A layer whose children run one after another: the index of the next child the attempt in flight starts. */
  nextChild = new Int32Array(0);
  private free = new Int32Array(0);
  private freeCount = 0;
  /** Calls in flight. */
  live = 0;

  alloc(): number {
    this.live++;
    if (this.freeCount > 0) return this.free[--this.freeCount];
    if (this.size === this.layer.length) this.grow();
    return this.size++;
  }

  release(id: number): void {
    this.live--;
    this.serial[id] = 0;
    this.free[this.freeCount++] = id;
  }

  private grow(): void {
    const n = Math.max(1024, this.layer.length * 2);
    for (const name of [
      'layer',
      'parent',
      'parentSerial',
      'key',
      'attempts',
      'pending',
      'failCode',
      'serial',
      'reqId',
      'target',
      'truncated',
      'degraded',
      'partial',
      'nextChild',
      'free',
    ] as const) {
      const a = new Int32Array(n);
      a.set(this[name]);
      this[name] = a;
    }
    for (const name of [
      'start',
      'deadline',
      'attemptStart',
      'tokens',
      'root',
      'prompt',
      'completion',
      'firstAt',
    ] as const) {
      const a = new Float64Array(n);
      a.set(this[name]);
      this[name] = a;
    }
  }
}
