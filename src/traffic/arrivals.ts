import type { SeededRandom } from '../engine/random.js';
import { sampler } from '../upstream/distribution.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import type { ArrivalConfig } from './config.js';

const K_ARRIVE = 1;
const K_USER = 2;
const MIN_THINK_MS = 1;

/**
 * Root task arrivals, on the schedule the scenario gives, whatever state the system is in
 * (open loop: a slow upstream does not slow arrivals down, so latency is measured from the
 * intended start with no coordinated omission). Closed-loop users wait for their task, think,
 * and start the next; their intended start is the end of the think time.
 */
export class Arrivals implements EventHandler {
  private readonly id: number;
  private readonly think: () => number;
  private readonly r: SeededRandom;
  /** Arrivals scheduled and not yet come: a live run ends once none is left and no call is live. */
  pending = 0;

  constructor(
    private readonly cfg: ArrivalConfig,
    private readonly durationMs: number,
    private readonly scheduler: Scheduler,
    private readonly start: (intendedStart: number, now: number) => void,
    random: SeededRandom,
    /**
     * A closed-loop user's least think time. On a virtual clock it must be > 0 (see `userDone`);
     * on the real clock time moves on by itself, and a floor would cap a closed loop's rate.
     */
    private readonly minThinkMs = MIN_THINK_MS,
    /**
     * A fleet worker's share (`rootFilter`): only the roots (open loop) or users (closed loop)
     * whose number it accepts start here; the others are another worker's. Every root keeps
     * the time it has in the whole run. @default every root
     */
    private readonly mine?: (n: number) => boolean,
  ) {
    this.r = random.split('arrivals');
    this.think = cfg.type === 'closed' ? sampler(cfg.thinkMs, this.r) : () => 0;
    this.id = scheduler.register(this);
  }

  /** Schedules the first arrivals. */
  begin(): void {
    if (this.cfg.type === 'closed') {
      for (let u = 0; u < this.cfg.users; u++) if (this.mine?.(u) ?? true) this.later(0, K_USER, u);
      return;
    }
    const first = this.cfg.type === 'ramp' || this.cfg.type === 'replay' ? this.rampTime(0) : this.gap(0);
    if (first < this.durationMs) this.arriveAt(this.cfg.type === 'constant' || this.cfg.type === 'burst' ? 0 : first);
  }

  /** A closed-loop user's task ended at `now`: it thinks, then starts another. */
  userDone(now: number): void {
    if (this.cfg.type !== 'closed') return;
    // At least 1 ms: a user whose task is refused at once must not start the next one at the
    // same instant, or a closed loop with no think time would never let time move.
    const at = now + Math.max(this.minThinkMs, this.think());
    if (at < this.durationMs) this.later(at, K_USER, 0);
  }

  handle(kind: number, _id: number, now: number): void {
    this.pending--;
    if (kind === K_USER) return this.start(now, now);
    // On the real clock an arrival can fire a little late: it still counts from when it was
    // due (no coordinated omission), and so does the next one, so the rate does not drift.
    const due = Math.min(this.due, now);
    this.start(due, now);
    this.count++;
    this.arriveAt(this.scheduled ? this.rampTime(this.count) : due + this.gap(due));
  }

  /** Schedules arrival number `count` at `at`, or, with a share, the first from there that is this share's. */
  private arriveAt(at: number): void {
    const mine = this.mine;
    if (mine !== undefined)
      while (at < this.durationMs && !mine(this.count)) {
        this.count++;
        at = this.scheduled ? this.rampTime(this.count) : at + this.gap(at);
      }
    if (at < this.durationMs) this.later(at, K_ARRIVE, 0);
  }

  /** When the pending open-loop arrival is due (on a virtual clock, exactly when it fires). */
  private due = 0;

  private later(at: number, kind: number, id: number): void {
    this.pending++;
    if (kind === K_ARRIVE) this.due = at;
    this.scheduler.schedule(at, this.id, kind, id);
  }

  private count = 0;

  /** Arrivals whose n-th time is known from n (a ramp, a replay), not from the one before. */
  private get scheduled(): boolean {
    return this.cfg.type === 'ramp' || this.cfg.type === 'replay';
  }

  /**
   * When the n-th arrival (from 0) of a ramp or a replay is due. A ramp's rate grows linearly
   * from `from` to `to` over D seconds, so arrivals by time t are N(t) = from·t + (to − from)·t² / 2D;
   * solve N(t) = n.
   */
  private rampTime(n: number): number {
    if (this.cfg.type === 'replay') return n < this.cfg.atMs.length ? this.cfg.atMs[n] : Infinity;
    if (this.cfg.type !== 'ramp') return Infinity;
    const a = (this.cfg.to - this.cfg.from) / (2 * (this.durationMs / 1000));
    const b = this.cfg.from;
    const t = Math.abs(a) < 1e-12 ? (b > 0 ? n / b : Infinity) : (-b + Math.sqrt(b * b + 4 * a * n)) / (2 * a);
    return Number.isFinite(t) && t >= 0 ? t * 1000 : Infinity;
  }

  /** Time to the next arrival after one at `t`, from the rate at `t` (tasks per second). */
  private gap(t: number): number {
    const rate = this.rateAt(t);
    if (!(rate > 0)) return Infinity;
    if (this.cfg.type === 'poisson') return (-Math.log(1 - this.r.next()) * 1000) / rate;
    return 1000 / rate;
  }

  private rateAt(t: number): number {
    const c = this.cfg;
    switch (c.type) {
      case 'constant':
      case 'poisson':
        return c.rate;
      case 'ramp':
        return c.from + (c.to - c.from) * Math.min(1, t / this.durationMs);
      case 'burst':
        return t % c.everyMs < c.lengthMs ? c.burstRate : c.rate;
      case 'closed':
      case 'replay':
        return 0;
    }
  }
}
