import { OptionError } from '../engine/errors.js';
import type { Random } from '../engine/random.js';
import type { UpstreamConfig } from '../upstream/config.js';
import { FaultTimeline } from '../upstream/fault-timeline.js';
import type { QuotaView } from '../upstream/quota.js';
import type { UpstreamListener } from '../upstream/response.js';
import { MODEL_DEFAULTS, UpstreamModel, type ModelStats } from '../upstream/upstream-model.js';
import type { ServedFault } from './fault-phases.js';
import type { RealTimeScheduler } from '../run/real-time-scheduler.js';

/** How a fault timeline names its phases (a scenario's path); the server's API calls them `faults[i]`. */
const SCENARIO_PREFIX = 'upstream.faults';

/** A model's counters, plus its quotas as the rate-limit headers show them. */
export interface ServedModelStats extends ModelStats {
  quotas: { requests?: QuotaFigures; tokens?: QuotaFigures };
}

export interface QuotaFigures {
  limit: number;
  remaining: number;
  resetMs: number;
}

/**
 * The `UpstreamModel` behind the HTTP server, on the real clock: the same model the simulator
 * runs, plus what a long-running server needs — fault phases replaced while it runs, a reset of
 * counters and quotas.
 *
 * A reset builds a fresh model (counters and quotas at zero, same faults); requests already in
 * flight finish on the old one, which is not counted any more and is forgotten once drained.
 */
export class UpstreamHost {
  readonly names: readonly string[];
  private phases: ServedFault[];
  private model!: UpstreamModel;
  private handler = -1;

  constructor(
    private readonly config: UpstreamConfig,
    private readonly scheduler: RealTimeScheduler,
    private readonly random: Random,
    private readonly listener: UpstreamListener,
  ) {
    this.names = config.models.map((m) => ({ ...MODEL_DEFAULTS, ...m }).name);
    this.phases = [...(config.faults ?? [])];
    this.build();
  }

  /** The model requests go to now (a reset replaces it). */
  get current(): UpstreamModel {
    return this.model;
  }

  modelIndex(name: string): number {
    return this.model.modelIndex(name);
  }

  /**
   * Submits request `id` now, answered with `outputTokens`; `flags` are `RequestFlag` bits (a
   * stream is told its first token and stalls); `leadMs` how long it had waited since it
   * arrived (taken off its first token).
   */
  submit(
    id: number,
    model: number,
    promptTokens: number,
    maxTokens: number,
    flags: number,
    outputTokens: number,
    leadMs = 0,
  ): void {
    this.model.submit(id, model, promptTokens, maxTokens, this.scheduler.now(), flags, outputTokens, leadMs);
  }

  /** The phases in force, on the server's timeline. */
  faults(): readonly ServedFault[] {
    return this.phases;
  }

  /** Replaces the fault phases (times on the server's timeline); throws an `OptionError` naming a bad one. */
  setFaults(phases: ServedFault[]): void {
    let timeline: FaultTimeline;
    try {
      timeline = new FaultTimeline(phases, this.names, this.random);
    } catch (e) {
      // The timeline names a phase as a scenario does (`upstream.faults[0]`); here it is `faults[0]`.
      if (e instanceof OptionError && e.option?.startsWith(SCENARIO_PREFIX)) {
        const option = e.option.slice('upstream.'.length);
        throw new OptionError(`${option} ${e.problem}`, option);
      }
      throw e;
    }
    this.model.setFaults(timeline);
    this.phases = phases;
  }

  /** Counters and quotas back to zero; faults stay. */
  reset(): void {
    this.build();
  }

  /**
   * The retry hint of an injected error: the `retryAfterMs` of the first `errors` / `outage`
   * phase that was active for the model at `arrivedAt` and can answer `status`; -1 if none.
   */
  faultRetryAfter(model: number, status: number, arrivedAt: number): number {
    const name = this.names[model];
    for (const p of this.phases) {
      if (p.retryAfterMs === undefined || (p.kind !== 'errors' && p.kind !== 'outage')) continue;
      if ((p.model !== undefined && p.model !== name) || arrivedAt < p.fromMs || arrivedAt >= p.toMs) continue;
      const s = p.status ?? (p.kind === 'outage' ? 503 : 500);
      if (typeof s === 'number' ? s === status : String(status) in s) return p.retryAfterMs;
    }
    return -1;
  }

  quotas(model: number): { requests?: QuotaView; tokens?: QuotaView } {
    return this.model.quotas(model);
  }

  stats(): ServedModelStats[] {
    const now = this.scheduler.now();
    return this.model.stats(now).models.map((m, i) => {
      const q = this.quotas(i);
      const fig = (v: QuotaView | undefined) =>
        v && { limit: v.limit, remaining: Math.floor(v.remaining(now)), resetMs: v.resetMs(now) };
      const quotas: ServedModelStats['quotas'] = {};
      if (q.requests) quotas.requests = fig(q.requests);
      if (q.tokens) quotas.tokens = fig(q.tokens);
      return { ...m, quotas };
    });
  }

  private build(): void {
    if (this.handler >= 0) this.scheduler.retire(this.handler);
    this.model = new UpstreamModel({ ...this.config, faults: this.phases }, this.scheduler, this.random, this.listener);
    this.handler = this.scheduler.handlerCount - 1;
  }
}
