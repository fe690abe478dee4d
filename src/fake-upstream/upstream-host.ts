import { OptionError } from '../engine/errors.js';
import type { Random } from '../engine/random.js';
import type { UpstreamConfig } from '../upstream/config.js';
import { FaultTimeline } from '../upstream/fault-timeline.js';
import type { QuotaView } from '../upstream/quota.js';
import type { UpstreamListener } from '../upstream/response.js';
import { continuingModels, MODEL_DEFAULTS, UpstreamModel, type ModelStats } from '../upstream/upstream-model.js';
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
    route?: string,
  ): void {
    this.model.submit(id, model, promptTokens, maxTokens, this.scheduler.now(), flags, outputTokens, leadMs, route);
  }

  /** The phases in force, on the server's timeline. */
  faults(): readonly ServedFault[] {
    return this.phases;
  }

  /** Replaces the fault phases (times on the server's timeline); throws an `OptionError` naming a bad one. */
  setFaults(phases: ServedFault[]): void {
    this.model.setFaults(servedTimeline(phases, this.names, this.random, continuingModels(this.config.models)));
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
    return faultHint(this.phases, this.names[model], status, arrivedAt, 'retryAfterMs') ?? -1;
  }

  /** The `x-should-retry` of an injected error (its phase's `shouldRetry`), as `faultRetryAfter` finds it; undefined if none. */
  faultShouldRetry(model: number, status: number, arrivedAt: number): boolean | undefined {
    return faultHint(this.phases, this.names[model], status, arrivedAt, 'shouldRetry');
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

/**
 * A hint an injected error carries (`retryAfterMs`, `shouldRetry`): that of the first `errors` /
 * `outage` phase that has it, was active for `model` at `arrivedAt` and can answer `status`.
 * The fake upstream and the proxy answer with it.
 */
export function faultHint<K extends 'retryAfterMs' | 'shouldRetry'>(
  phases: readonly ServedFault[],
  model: string,
  status: number,
  arrivedAt: number,
  key: K,
): ServedFault[K] | undefined {
  for (const p of phases) {
    if (p[key] === undefined || (p.kind !== 'errors' && p.kind !== 'outage')) continue;
    if ((p.model !== undefined && p.model !== model) || arrivedAt < p.fromMs || arrivedAt >= p.toMs) continue;
    const s = p.status ?? (p.kind === 'outage' ? 503 : 500);
    if (typeof s === 'number' ? s === status : String(status) in s) return p[key];
  }
  return undefined;
}

/**
 * The timeline of phases a server's control API was given, for `models`; a bad phase is an
 * `OptionError` naming it as the API does (`faults[0].rate`), not as a scenario does.
 */
export function servedTimeline(
  phases: readonly ServedFault[],
  models: readonly string[],
  random: Random,
  continuing?: readonly string[],
): FaultTimeline {
  try {
    return new FaultTimeline(phases, models, random, continuing);
  } catch (e) {
    // The timeline names a phase as a scenario does (`upstream.faults[0]`); here it is `faults[0]`.
    if (e instanceof OptionError && e.option?.startsWith(SCENARIO_PREFIX)) {
      const option = e.option.slice('upstream.'.length);
      throw new OptionError(`${option} ${e.problem}`, option);
    }
    throw e;
  }
}
