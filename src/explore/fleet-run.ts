import { randomUUID } from 'node:crypto';
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { preciseClock } from '../platform/system-clock.js';
import { collectorOptions } from '../run/live/live-run.js';
import { MetricsCollector } from '../run/metrics/collector.js';
import type { LiveFigures, LiveWorker, RunResult, SharedState } from '../run/metrics/result.js';
import { sharedStateOf } from './fleet-state.js';
import { planShare } from '../run/root-plan.js';
import type { RunSpec } from '../run/run-spec.js';
import type { RunView } from '../run/run-view.js';
import type { ModelStats, UpstreamStats } from '../upstream/upstream-model.js';
import { redisNowMs } from './fleet-clock.js';
import {
  FLEET_DEFAULTS,
  FLEET_KEY_TTL_S,
  type FleetTimings,
  fleetKeys,
  LIVE_SHARE_JOB,
  type LiveShareJob,
  type ShareReady,
  type ShareReport,
  type ShareSkipped,
} from './fleet-protocol.js';
import { QueueError } from './queue-target.js';

/** Fewer workers than asked took their shares within the wait: the run does not start. */
export class FleetShortError extends QueueError {
  constructor(
    readonly ready: number,
    readonly asked: number,
    waitMs: number,
    where: string,
  ) {
    super(
      `--workers ${asked}: only ${ready} of ${asked} workers took a share on ${where} within ${waitMs / 1000} s (--fleet-wait); start more \`stormlab worker --queue …\` or ask for fewer; nothing was started`,
    );
  }
}

/** What one variant's fleet run asks of each worker, less what differs per share. */
export type ShareJobBase = Omit<LiveShareJob, 'run' | 'share' | 'of'>;

/** A fleet run of one variant, over: the merged result, who drove what, and what was lost. */
export interface FleetOutcome {
  result: RunResult;
  /** Requests every reported worker wrote to the target (hop 2's `sent`). */
  sent: number;
  /** Requests without an HTTP answer, by code, over the reported workers. */
  errorCodes: Map<string, number>;
  /** Stopped before the end (the coordinator's stop, or a worker's own). */
  interrupted: boolean;
  /** From the agreed start to the last report, ms. */
  wallMs: number;
}

interface ShareSlot {
  ready?: ShareReady;
  last?: ShareReport;
  final?: ShareReport;
  lost?: string;
  heardAt: number;
}

/**
 * The coordinator's side of one variant's live run on a fleet. It puts one job per share on
 * the queue, waits (at most `waitMs`) for N workers to hold one each, runs `beforeStart`
 * (installing hop 2's faults), agrees the start on Redis's clock (`TIME` + a lead), and
 * then only listens: each worker's counters once a second (the dashboard's merged view) and
 * its last ones at its end. A worker not heard from for `lostMs` is lost: its share is
 * named and left out. The result is the exact merge of the reported workers' counters and
 * histograms — one `RunResult` of the same shape as a single process's, with `live.workers`.
 * `stop()` tells every worker to stop (they still send what they measured).
 */
export class FleetRun {
  readonly run = randomUUID();
  private readonly slots: ShareSlot[];
  private stopped = false;
  private startedAt: number | undefined = undefined;
  private endedAt: number | undefined = undefined;
  private over = false;
  private readonly keys = fleetKeys(this.run);
  private readonly t: FleetTimings;
  private wake: (() => void) | undefined;
  private mergedAt = -1;
  private merged: MetricsCollector | undefined;
  private reports = 0;

  constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly redis: Redis,
    readonly spec: RunSpec,
    private readonly base: ShareJobBase,
    readonly workers: number,
    private readonly where: string,
    timings: Partial<FleetTimings> = {},
  ) {
    this.t = { ...FLEET_DEFAULTS, ...timings };
    this.slots = Array.from({ length: workers }, () => ({ heardAt: 0 }));
  }

  private shareOf(jobId: string | undefined): number {
    if (jobId === undefined || !jobId.startsWith(`${this.run}-`)) return -1;
    const k = Number(jobId.slice(this.run.length + 1));
    return Number.isInteger(k) && k >= 0 && k < this.workers ? k : -1;
  }

  private readonly onProgress = ({ jobId, data }: { jobId: string; data: unknown }): void => {
    const k = this.shareOf(jobId);
    if (k < 0) return;
    const slot = this.slots[k];
    if (slot.lost !== undefined || slot.final !== undefined) return;
    slot.last = data as ShareReport;
    slot.heardAt = preciseClock.now();
    this.reports++;
  };

  private readonly onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }): void => {
    const k = this.shareOf(jobId);
    if (k < 0) return;
    const answer = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as
      | ShareReport
      | ShareSkipped;
    const slot = this.slots[k];
    if ('skipped' in answer || slot.lost !== undefined) return;
    slot.final = answer;
    slot.last = answer;
    slot.heardAt = preciseClock.now();
    this.reports++;
    this.wake?.();
  };

  private readonly onFailed = ({ jobId, failedReason }: { jobId: string; failedReason: string }): void => {
    const k = this.shareOf(jobId);
    if (k < 0) return;
    const slot = this.slots[k];
    if (slot.final === undefined) slot.lost ??= `its worker failed: ${failedReason}`;
    this.wake?.();
  };

  /** What this variant's engines share across the fleet. */
  get sharedState(): SharedState {
    return sharedStateOf(this.spec);
  }

  /** Ms since the agreed start (0 before it). */
  get now(): number {
    if (this.startedAt === undefined) return 0;
    return Math.max(0, (this.endedAt ?? preciseClock.now()) - this.startedAt);
  }

  get done(): boolean {
    return this.over;
  }

  get started(): boolean {
    return this.startedAt !== undefined;
  }

  /** Past the agreed start: the workers drive (before it, they wait for the instant). */
  get driving(): boolean {
    return this.startedAt !== undefined && preciseClock.now() >= this.startedAt;
  }

  get interrupted(): boolean {
    return this.stopped || this.slots.some((s) => s.final?.interrupted === true);
  }

  /** Tells every worker to stop now (and the wait for workers to end): what they measured still comes back. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    void this.redis.hset(this.keys.control, 'stop', '1').catch(() => {});
    this.wake?.();
  }

  /**
   * Runs the variant on the fleet: refuses (`FleetShortError`) when fewer than N workers take a
   * share within the wait; `beforeStart` runs once all have, just before the start is agreed.
   */
  async drive(beforeStart: () => Promise<void> = async () => {}): Promise<FleetOutcome> {
    this.events.on('progress', this.onProgress);
    this.events.on('completed', this.onCompleted);
    this.events.on('failed', this.onFailed);
    // Until the start is set, the workers holding a share wait as long as this key says we are here.
    const keepAlive = (): Promise<unknown> =>
      this.redis.set(this.keys.alive, '1', 'PX', this.t.lostMs).catch(() => undefined);
    await keepAlive();
    const beat = setInterval(keepAlive, this.t.lostMs / 5);
    try {
      await this.queue.addBulk(
        this.slots.map((_, share) => ({
          name: LIVE_SHARE_JOB,
          data: { ...this.base, run: this.run, share, of: this.workers } satisfies LiveShareJob,
          opts: { jobId: `${this.run}-${share}`, removeOnComplete: true, removeOnFail: true, attempts: 1 },
        })),
      );
      await this.awaitReady();
      if (this.stopped) return this.outcome();
      await beforeStart();
      const start = (await redisNowMs(this.redis)) + this.t.leadMs;
      await this.redis.hset(this.keys.control, 'start', String(start));
      await this.redis.expire(this.keys.control, FLEET_KEY_TTL_S);
      clearInterval(beat);
      // Our own clock's view of the instant: the progress lines and the lost-worker watch count from it.
      const offset = (await redisNowMs(this.redis)) - preciseClock.now();
      this.startedAt = start - offset;
      for (const s of this.slots) s.heardAt = this.startedAt;
      await this.awaitReports();
      this.endedAt = preciseClock.now();
      return this.outcome();
    } finally {
      clearInterval(beat);
      this.over = true;
      this.events.off('progress', this.onProgress);
      this.events.off('completed', this.onCompleted);
      this.events.off('failed', this.onFailed);
      await this.cleanUp();
    }
  }

  private async awaitReady(): Promise<void> {
    const until = preciseClock.now() + this.base.waitMs;
    for (;;) {
      // Read whole each time: a worker that gave a share up took its entry back.
      const ready = await this.redis.hgetall(this.keys.ready);
      this.slots.forEach((slot, k) => {
        const v = ready[String(k)];
        slot.ready = v === undefined ? undefined : (JSON.parse(v) as ShareReady);
      });
      const n = this.slots.filter((s) => s.ready !== undefined).length;
      if (n === this.workers || this.stopped) return;
      if (preciseClock.now() >= until) {
        // No start: the workers holding a share give it up, the jobs no one took go.
        this.stop();
        throw new FleetShortError(n, this.workers, this.base.waitMs, this.where);
      }
      await this.pause(100);
    }
  }

  private async awaitReports(): Promise<void> {
    for (;;) {
      const now = preciseClock.now();
      for (const s of this.slots)
        if (s.final === undefined && s.lost === undefined && now - s.heardAt > this.t.lostMs)
          s.lost = `not heard from for ${this.t.lostMs / 1000} s`;
      if (this.slots.every((s) => s.final !== undefined || s.lost !== undefined)) return;
      await this.pause(Math.min(250, this.t.lostMs / 4));
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async cleanUp(): Promise<void> {
    await Promise.allSettled(this.slots.map((_, k) => this.queue.remove(`${this.run}-${k}`)));
    await this.redis.del(this.keys.ready, this.keys.claims, this.keys.alive).catch(() => {});
    // The control key stays until its TTL when stopped: a worker that has not yet looked must still see the stop.
    if (!this.stopped) await this.redis.del(this.keys.control).catch(() => {});
  }

  /** The reported shares' counters merged (`final` only: the finished run; else the latest of each, for the dashboard). */
  private merge(finalOnly: boolean): MetricsCollector {
    const m = new MetricsCollector(collectorOptions(this.spec));
    for (const s of this.slots) {
      const r = finalOnly ? s.final : s.lost === undefined ? s.last : undefined;
      if (r !== undefined) m.absorb(r.state);
    }
    return m;
  }

  /** What the dashboard and progress lines show: the workers' latest counters merged. */
  view(name = this.spec.name): RunView {
    if (this.merged === undefined || this.mergedAt !== this.reports) {
      this.merged = this.merge(false);
      this.mergedAt = this.reports;
    }
    const t = this.now;
    return {
      name,
      snapshot: this.merged.snapshot(t),
      engines: [],
      upstream: sumUpstream(this.slots.flatMap((s) => (s.last === undefined || s.lost ? [] : [s.last.upstream]))),
      done: this.over,
    };
  }

  /** Requests the reported workers wrote so far. */
  sent(): number {
    return this.slots.reduce((n, s) => n + (s.lost === undefined ? (s.last?.sent ?? 0) : 0), 0);
  }

  private outcome(): FleetOutcome {
    const m = this.merge(true);
    const durationMs = this.interrupted
      ? Math.min(this.spec.durationMs, Math.max(1, Math.round(this.now)))
      : this.spec.durationMs;
    const reported = this.slots.flatMap((s) => (s.final === undefined ? [] : [s.final]));
    const figures = reported.map((r) => r.live).filter((l): l is LiveFigures => l !== undefined);
    const live: LiveFigures = {
      poolConnections: figures.reduce((n, f) => n + f.poolConnections, 0),
      maxPending: figures.reduce((n, f) => Math.max(n, f.maxPending), 0),
      meanPending: figures.reduce((n, f) => n + f.meanPending, 0),
      requestErrors: figures.reduce((n, f) => n + f.requestErrors, 0),
      workers: this.slots.map((s, share) => this.workerFigures(s, share)),
    };
    const errorCodes = new Map<string, number>();
    for (const r of reported)
      for (const [code, n] of Object.entries(r.errorCodes ?? {})) errorCodes.set(code, (errorCodes.get(code) ?? 0) + n);
    return {
      result: { ...m.result({ name: this.spec.name, durationMs }), live },
      sent: reported.reduce((n, r) => n + r.sent, 0),
      errorCodes,
      interrupted: this.interrupted,
      wallMs: Math.round(this.now),
    };
  }

  private workerFigures(s: ShareSlot, share: number): LiveWorker {
    const plan = planShare(this.spec, { index: share, of: this.workers });
    const r = s.final ?? s.last;
    return {
      share,
      of: this.workers,
      worker: s.ready?.worker ?? r?.worker ?? null,
      status: s.final !== undefined ? 'reported' : 'lost',
      plannedRoots: plan.roots,
      ...(plan.users === undefined ? {} : { users: plan.users }),
      roots: r?.state.roots.offered ?? 0,
      sent: r?.sent ?? 0,
      offsetMs: s.ready?.offsetMs ?? 0,
      startLagMs: r?.startLagMs ?? 0,
      interrupted: s.final?.interrupted ?? s.final === undefined,
      ...(s.final?.storeUnavailable ? { storeUnavailable: s.final.storeUnavailable } : {}),
    };
  }
}

/** The workers' views of the upstream added up (what each sees of its own requests). */
function sumUpstream(views: UpstreamStats[]): UpstreamStats {
  const models = new Map<string, ModelStats>();
  for (const v of views)
    for (const m of v.models) {
      const into = models.get(m.name);
      if (into === undefined) {
        models.set(m.name, { ...m, byStatus: { ...m.byStatus }, byDetail: { ...m.byDetail } });
        continue;
      }
      into.busy += m.busy;
      into.queued += m.queued;
      into.attempts += m.attempts;
      into.tokensServed += m.tokensServed;
      into.wastedTokens += m.wastedTokens;
      into.cancelled += m.cancelled;
      for (const [k, n] of Object.entries(m.byStatus)) into.byStatus[k] = (into.byStatus[k] ?? 0) + n;
      for (const [k, n] of Object.entries(m.byDetail)) into.byDetail[k] = (into.byDetail[k] ?? 0) + n;
    }
  return { models: [...models.values()] };
}
