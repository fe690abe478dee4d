import { checkWindowSpec, type WindowCounterLike, type WindowSpec } from '../window-counter.js';

/** One bucket's counts as a shared store holds them: the bucket's absolute id and a value per field. */
export type BucketCounts = Map<number, Float64Array>;

/** Deltas on their way to the shared store: parallel arrays of bucket id, field, amount. */
export interface WindowDeltas {
  ids: number[];
  fields: number[];
  values: number[];
  /** Oldest bucket id still inside the window when the deltas were taken. */
  minId: number;
}

/**
 * A sliding window whose counts many processes share, for a store that syncs in the
 * background. Buckets are numbered on the shared timeline (`floor(now / bucketMs)`, so every
 * process must use an epoch-based clock); this process adds to its view at once and keeps
 * what it added and has not sent yet. A sync takes those deltas (`takeDeltas`), the store adds
 * them to the shared buckets and answers with every process's counts, and `applyRemote`
 * rebuilds the view from that answer plus whatever was added while it was on its way. If the
 * sync fails, `requeue` puts the deltas back, and the view — this process's counts on top of
 * the last shared answer, sliding as usual — is what the primitives keep deciding on.
 *
 * Reads and adds are O(1) as in `WindowCounter`; a sync costs O(buckets × fields).
 */
export class SharedWindowCounter implements WindowCounterLike {
  readonly spec: WindowSpec;
  private readonly bucketMs: number;
  private readonly nb: number;
  private readonly nf: number;
  /** Running totals in `[0, nf)`, then slot s's fields at `(s + 1) * nf`. */
  private readonly cells: Float64Array;
  /** What this process added to slot s and has not handed to a sync, at `s * nf`. */
  private readonly unsent: Float64Array;
  /** The absolute bucket id each slot holds. */
  private readonly ids: Float64Array;
  private headId = -Infinity;
  /** Where the head slot's fields start in `cells` and `unsent`: no modulo per add. */
  private headCell = 0;
  private headUnsent = 0;
  private headEnd = -Infinity;
  private dirty = false;
  /** When the next sync may change the view; `stableUntil` never answers past it. */
  private nextSyncAt = -Infinity;

  constructor(spec: WindowSpec, name = 'window') {
    this.spec = checkWindowSpec(spec, name);
    this.nb = spec.buckets;
    this.nf = spec.fields;
    this.bucketMs = spec.windowMs / spec.buckets;
    this.cells = new Float64Array((this.nb + 1) * this.nf);
    this.unsent = new Float64Array(this.nb * this.nf);
    this.ids = new Float64Array(this.nb).fill(-Infinity);
  }

  /** Whether there is anything to send. */
  get hasDeltas(): boolean {
    return this.dirty;
  }

  add(field: number, n: number, now: number): void {
    if (now >= this.headEnd) this.slide(now);
    const c = this.cells;
    c[this.headCell + field] += n;
    c[field] += n;
    this.unsent[this.headUnsent + field] += n;
    this.dirty = true;
  }

  total(field: number, now: number): number {
    if (now >= this.headEnd) this.slide(now);
    return this.cells[field];
  }

  stableUntil(now: number): number {
    if (now >= this.headEnd) this.slide(now);
    return this.nextSyncAt > now && this.nextSyncAt < this.headEnd ? this.nextSyncAt : this.headEnd;
  }

  /** Hands the unsent deltas to a sync (and forgets them here). */
  takeDeltas(now: number): WindowDeltas {
    if (now >= this.headEnd) this.slide(now);
    const out: WindowDeltas = { ids: [], fields: [], values: [], minId: this.headId - this.nb + 1 };
    if (!this.dirty) return out;
    const nf = this.nf;
    for (let s = 0; s < this.nb; s++) {
      for (let f = 0; f < nf; f++) {
        const v = this.unsent[s * nf + f];
        if (v === 0) continue;
        out.ids.push(this.ids[s]);
        out.fields.push(f);
        out.values.push(v);
        this.unsent[s * nf + f] = 0;
      }
    }
    this.dirty = false;
    return out;
  }

  /** A sync failed: its deltas go back to be sent next time (those still inside the window). */
  requeue(deltas: WindowDeltas): void {
    for (let i = 0; i < deltas.ids.length; i++) {
      const id = deltas.ids[i];
      const slot = this.slotOf(id);
      if (this.ids[slot] !== id) continue; // slid out meanwhile: nobody's window holds it now
      this.unsent[slot * this.nf + deltas.fields[i]] += deltas.values[i];
      this.dirty = true;
    }
  }

  /**
   * Rebuilds the view from the shared counts (which include every delta this process sent)
   * plus what was added here since. Buckets the answer does not have count only what is
   * unsent; buckets ahead of this process's head (another host's clock runs ahead) wait until
   * the head reaches them. `nextSyncAt` bounds `stableUntil`.
   */
  applyRemote(remote: BucketCounts, now: number, nextSyncAt: number): void {
    if (now >= this.headEnd) this.slide(now);
    const nf = this.nf;
    const c = this.cells;
    c.fill(0, 0, nf);
    for (let s = 0; s < this.nb; s++) {
      const counts = remote.get(this.ids[s]);
      for (let f = 0; f < nf; f++) {
        const v = (counts === undefined ? 0 : counts[f]) + this.unsent[s * nf + f];
        c[(s + 1) * nf + f] = v;
        c[f] += v;
      }
    }
    this.nextSyncAt = nextSyncAt;
  }

  private slotOf(id: number): number {
    const s = id % this.nb;
    return s < 0 ? s + this.nb : s;
  }

  /** Moves the head to the bucket holding `now`, emptying the slots it passes. */
  private slide(now: number): void {
    const id = Math.floor(now / this.bucketMs);
    const nf = this.nf;
    const c = this.cells;
    const first = id - this.headId >= this.nb ? id - this.nb + 1 : this.headId + 1;
    for (let b = first; b <= id; b++) {
      const s = this.slotOf(b);
      for (let f = 0; f < nf; f++) {
        c[f] -= c[(s + 1) * nf + f];
        c[(s + 1) * nf + f] = 0;
        this.unsent[s * nf + f] = 0;
      }
      this.ids[s] = b;
    }
    if (first > this.headId + 1 || this.headId === -Infinity) c.fill(0, 0, nf); // everything left the window
    this.headId = id;
    const head = this.slotOf(id);
    this.headCell = (head + 1) * nf;
    this.headUnsent = head * nf;
    this.headEnd = (id + 1) * this.bucketMs;
  }
}
