import type { DashboardModel, RunView } from '../run/run-view.js';
import type { Scenario } from '../scenario/scenario.js';

/**
 * A run the dashboard can show: a `Simulation`, stepped through virtual time with `advanceTo`,
 * or a `LiveRun`, which has none because it runs on the real clock by itself.
 */
export interface Steppable {
  readonly now: number;
  readonly done: boolean;
  view(name: string): RunView;
  advanceTo?(t: number): void;
}

/**
 * Plays runs back for the dashboard. Simulations at a chosen speed: each `tick(wallMs)` moves
 * every variant's virtual clock on by `speed × wallMs` (all of them to the same virtual time,
 * so they stay side by side); the result does not depend on the speed, since a simulation
 * gives the same result however it is stepped. Live runs (no `advanceTo`) go at real time
 * whatever happens here: a tick only takes a new frame, at the clock of the run in progress
 * (live variants run one after the other), and they cannot be paused.
 */
/** At speed max: the first tick's share of the run, and the work a tick aims at (ms of wall time). */
const MAX_SPEED_FIRST_STEPS = 100;
const MAX_SPEED_TICK_MS = 40;

export class Playback {
  private t = 0;
  private isPaused = false;
  private stopped = false;
  private readonly listeners = new Set<() => void>();
  private views: RunView[] | undefined;
  /** At speed max: the virtual time one tick moves on, doubled while ticks stay short, halved when one is long. */
  private maxStep: number;

  /**
   * `advance(t)` steps every run to virtual time t (the caller keeps the wall-time books);
   * `wallClock` times the steps at speed max.
   */
  constructor(
    readonly scenario: Scenario,
    readonly runs: Array<{ name: string; sim: Steppable }>,
    readonly speed: number,
    private readonly advance: (t: number) => void = (t) => runs.forEach((r) => r.sim.advanceTo?.(t)),
    private readonly wallClock: () => number = () => performance.now(),
  ) {
    this.maxStep = Math.max(1, scenario.durationMs / MAX_SPEED_FIRST_STEPS);
    this.live = runs.length > 0 && runs.every((r) => r.sim.advanceTo === undefined);
  }

  /** Live runs: real time, no stepping, no pause. */
  readonly live: boolean;

  get now(): number {
    return this.live ? this.liveClock() : this.t;
  }

  get paused(): boolean {
    return this.isPaused;
  }

  /** True when every run has finished, or the user stopped. */
  get done(): boolean {
    return this.stopped || this.runs.every((r) => r.sim.done);
  }

  /** The user stopped: the runs keep what they have, as a partial result. */
  get interrupted(): boolean {
    return this.stopped && !this.runs.every((r) => r.sim.done);
  }

  togglePause(): void {
    if (this.live) return;
    this.isPaused = !this.isPaused;
    this.changed();
  }

  stop(): void {
    this.stopped = true;
    this.changed();
  }

  /**
   * Moves virtual time on by `speed × wallMs`. At speed max, by as much as fits in about one
   * frame's work: a small scenario ends in a few ticks, a huge one still shows frames and hears q.
   */
  tick(wallMs: number): void {
    if (this.live) return this.changed(); // a new frame, the last one too (it shows the end)
    if (this.isPaused || this.done) return;
    if (this.speed !== Infinity) return this.advanceTo(this.t + this.speed * wallMs);
    const started = this.wallClock();
    this.advanceTo(this.t + this.maxStep);
    const took = this.wallClock() - started;
    if (took < MAX_SPEED_TICK_MS / 2) this.maxStep *= 2;
    else if (took > MAX_SPEED_TICK_MS * 2) this.maxStep = Math.max(1, this.maxStep / 2);
  }

  /** Moves every run to virtual time `t` (at once, whatever the speed). */
  advanceTo(t: number): void {
    this.t = t;
    this.advance(t);
    if (this.runs.every((r) => r.sim.done)) this.t = Math.max(...this.runs.map((r) => r.sim.now));
    this.changed();
  }

  frame(): DashboardModel {
    this.views ??= this.runs.map((r) => r.sim.view(r.name));
    return {
      scenario: this.scenario.name,
      mode: this.live ? 'live' : 'sim',
      seed: this.scenario.seed,
      t: this.live ? this.liveClock() : Math.min(this.t, Math.max(...this.runs.map((r) => r.sim.now))),
      durationMs: this.scenario.durationMs,
      speed: this.speed,
      paused: this.isPaused,
      faults: this.scenario.upstream.faults,
      variants: this.views,
    };
  }

  /** The clock of the live run in progress (they run one after the other), or of the last one. */
  private liveClock(): number {
    const running = this.runs.find((r) => !r.sim.done && r.sim.now > 0);
    return running !== undefined ? running.sim.now : Math.max(...this.runs.map((r) => (r.sim.done ? r.sim.now : 0)));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.views = undefined;
    for (const l of this.listeners) l();
  }
}

/** `--speed`: `10x`, `10`, `0.5x` or `max`; by default a run takes about 15 s to watch. */
export function parseSpeed(raw: string | undefined, durationMs: number): number | undefined {
  if (raw === undefined) return Math.max(1, durationMs / 15_000);
  if (raw === 'max') return Infinity;
  const m = /^(\d+(?:\.\d+)?)x?$/.exec(raw.trim());
  const n = m ? Number(m[1]) : NaN;
  return n > 0 ? n : undefined;
}
