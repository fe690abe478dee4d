import { OptionError, type ShedReason } from '../../engine/errors.js';
import { checkPositive } from '../../engine/options.js';
import { type EncodedHistogram, LatencyHistogram } from './histogram.js';
import { LayerStats, type LayerStatsState } from './layer-stats.js';
import { recoveryTime } from './recovery-time.js';
import type { LayerResult, RootResult, RunResult, RunSnapshot } from './result.js';
import { ratio, round6 } from './round.js';
import type { PackedCounts } from './packed-counts.js';
import { RunSeries, type EngineSample, type RunSeriesState } from './run-series.js';
import { StreamStats, type StreamStatsState } from './stream-stats.js';
import { BIN_MS, binOf } from './time-series.js';
import { UpstreamCounters, type UpstreamCountersState } from './upstream-counters.js';
import type { ToolServiceStats } from '../../upstream/tool-service.js';
import type { ToolObserver } from '../../traffic/tool-observer.js';
import { ToolStats, type ToolInfo, type ToolStatsState } from './tool-stats.js';
import { TenantStats } from './tenant-stats.js';

export type { EngineSample } from './run-series.js';

export interface MetricsCollectorOptions {
  /** Layer names, top (root) first; methods address layers by index into this list. */
  layers: string[];
  /** Upstream model names; methods address models by index into this list. */
  models: string[];
  /** The run's length: goodput is per second of it, recovery is looked for within it. */
  durationMs: number;
  /** The layers whose calls are streamed (TTFT and truncated successes are reported for them). @default none */
  streamLayers?: string[];
  /** Whether a streamed layer can resume broken streams (a model declares continuation): `resumedStreams` in the result. */
  resumes?: boolean;
  /** The tool service's tools, when the scenario calls any; methods address them by index. */
  tools?: ToolInfo[];
  /** Whether the scenario's users may resubmit (a `users` section in the result). */
  users?: boolean;
  /** The scenario's tenants, when it names any (a `tenants` section in the result). */
  tenants?: string[];
  /** Whether the last layer limits inference (an `inference` section in the result). */
  inference?: boolean;
  /** Whether the scenario has stage budgets (`roots.partial` in the result). */
  stages?: boolean;
}

/**
 * Everything a `MetricsCollector` counted, exactly, as JSON: counters, encoded histograms and
 * series bins, never percentiles. A fleet's workers send theirs; the coordinator adds them
 * into one collector of the same run (`absorb`), whose result is then that of one process
 * that saw every sample.
 */
export interface CollectorState {
  roots: { offered: number; ok: number; late: number; failed: number; degraded: number; partial: number | null };
  rootLatency: EncodedHistogram;
  layers: LayerStatsState;
  upstream: UpstreamCountersState;
  series: RunSeriesState;
  stream: StreamStatsState | null;
  tools: ToolStatsState | null;
  tenants: PackedCounts | null;
  inference: { queued: number; gaveUp: number; fallbacks: number; waitSum: number; waitMax: number } | null;
}

const SNAPSHOT_BINS = 60;
const RECENT_BINS = 5;

/**
 * Everything a run measures, fed by the driver (sim or live) as things happen. Every method
 * called per root, call or attempt is O(1) and allocation-free: counters live in flat typed
 * arrays indexed by layer/model/reason, latencies in fixed-size HDR histograms, series in
 * per-second bins, so memory is flat in the number of requests. Times are ms since the run
 * started (virtual or real); latencies are measured from the intended start.
 */
export class MetricsCollector implements ToolObserver {
  readonly layers: readonly string[];
  readonly models: readonly string[];
  readonly durationMs: number;
  private readonly leaf: number;
  private readonly series: RunSeries;
  private readonly layerStats: LayerStats;
  private readonly upstream: UpstreamCounters;
  private readonly rootLatency = new LatencyHistogram();
  /** Only when a layer streams: a run without one reports what it always did. */
  private readonly stream: StreamStats | undefined;
  private offered = 0;
  private ok = 0;
  private late = 0;
  private failed = 0;
  private readonly tools: ToolStats | undefined;
  private readonly hasUsers: boolean;
  private degradedRoots = 0;
  /** Root tasks ended with a partial result; undefined without stage budgets. */
  private partialRoots: number | undefined;
  private readonly tenants: TenantStats | undefined;
  private readonly inference:
    | { queued: number; gaveUp: number; fallbacks: number; waitSum: number; waitMax: number }
    | undefined;
  /** What the tool service did (executions, duplicates, conflicts): the driver says where to read it. */
  toolEffects: (() => readonly ToolServiceStats[]) | undefined = undefined;

  constructor(opts: MetricsCollectorOptions) {
    if (!Array.isArray(opts.layers) || opts.layers.length === 0)
      throw new OptionError('metrics.layers must name at least one layer, got none');
    if (!Array.isArray(opts.models)) throw new OptionError('metrics.models must be an array of model names');
    this.durationMs = checkPositive('metrics.durationMs', opts.durationMs);
    this.layers = [...opts.layers];
    this.models = [...opts.models];
    this.leaf = this.layers.length - 1;
    this.series = new RunSeries(this.layers, opts.durationMs);
    this.layerStats = new LayerStats(this.layers);
    this.upstream = new UpstreamCounters(this.models);
    const streamed = opts.streamLayers ?? [];
    for (const name of streamed) indexOf('layer', this.layers, name);
    this.stream = streamed.length > 0 ? new StreamStats(this.layers, streamed, opts.resumes === true) : undefined;
    this.hasUsers = opts.users === true;
    if (opts.stages === true) this.partialRoots = 0;
    this.tenants = opts.tenants === undefined ? undefined : new TenantStats(opts.tenants);
    this.inference =
      opts.inference === true ? { queued: 0, gaveUp: 0, fallbacks: 0, waitSum: 0, waitMax: 0 } : undefined;
    this.tools = (opts.tools?.length ?? 0) > 0 || this.hasUsers ? new ToolStats(opts.tools ?? []) : undefined;
  }

  /** Index of a layer by name (resolve once, outside the hot path). */
  layerIndex(name: string): number {
    return indexOf('layer', this.layers, name);
  }

  /** Index of a model by name (resolve once, outside the hot path). */
  modelIndex(name: string): number {
    return indexOf('model', this.models, name);
  }

  /** Upstream attempts so far, every model (for the driver's attempts-per-second timing). */
  get upstreamAttempts(): number {
    return this.upstream.totalAttempts();
  }

  rootOffered(t: number): void {
    this.offered++;
    this.series.offered(t);
  }

  /** A root task finished at `t`; ok within its deadline is goodput, ok after it is `late`. */
  rootDone(intendedStart: number, t: number, ok: boolean, withinDeadline: boolean, partial = false): void {
    this.rootLatency.record(t - intendedStart);
    if (!ok) this.failed++;
    else if (partial && this.partialRoots !== undefined) this.partialRoots++;
    else if (!withinDeadline) this.late++;
    else {
      this.ok++;
      this.series.ok(t);
    }
  }

  /** `n` logical calls at `layer` (calls the tree would make if every call succeeded first time). */
  logicalCall(layer: number, n: number, t: number): void {
    this.layerStats.logical(layer, n);
    if (layer === this.leaf) this.series.leafCalls(t, n);
  }

  /** An attempt made at `layer`; a retry is an attempt after the first. */
  attempt(layer: number, _t: number, isRetry: boolean): void {
    this.layerStats.attempt(layer, isRetry);
  }

  /** A logical call at `layer` finished (after all its attempts), ok or not. */
  callDone(layer: number, intendedStart: number, t: number, ok: boolean): void {
    this.layerStats.done(layer, t - intendedStart, ok);
  }

  /** A call refused locally by the engine at `layer`, before it reached the next layer. */
  shed(layer: number, reason: ShedReason, t: number): void {
    this.layerStats.shed(layer, reason);
    this.series.shed(t);
  }

  upstreamAttempt(model: number, t: number): void {
    this.upstream.attempt(model);
    this.series.upstreamAttempt(t);
  }

  /**
   * The upstream's answer to an attempt: `status` an HTTP status, 0 for a connection reset,
   * -1 for no answer (hang/timeout); `detail` for a 429 names the limit (1 requests, 2 tokens,
   * 3 insufficient_quota; 0 if unknown); `tokens` the tokens the upstream served for it.
   */
  upstreamResponse(model: number, status: number, detail: number, tokens: number, t: number): void {
    this.upstream.response(model, status, detail, tokens);
    this.series.response(status, t);
  }

  /** Tokens the upstream spent on an attempt whose caller had given up or failed. */
  wasted(tokens: number, _t: number, model = -1, layer = -1): void {
    this.upstream.wasted(model, tokens);
    if (layer >= 0) this.layerStats.wasted(layer, tokens);
  }

  /** A streamed call at `layer` succeeded, its first token `ttftMs` after the call's start. */
  streamDone(layer: number, ttftMs: number, _t: number): void {
    this.stream?.streamDone(layer, ttftMs);
  }

  /** A call at `layer` succeeded with a cut stream taken as complete (its own or one below). */
  truncatedSuccess(layer: number, _t: number): void {
    this.stream?.truncatedSuccess(layer);
  }

  /** A streamed call at `layer` succeeded with an answer whose broken stream was continued. */
  resumedSuccess(layer: number, _t: number): void {
    this.stream?.resumedSuccess(layer);
  }

  toolLogical(tool: number, n: number): void {
    this.tools?.logical(tool, n);
  }

  toolAttempt(tool: number, isRetry: boolean, _t: number): void {
    this.tools?.attempt(tool, isRetry);
  }

  toolAnswer(tool: number, status: number, _t: number): void {
    this.tools?.answer(tool, status);
  }

  toolDone(tool: number, intendedStart: number, t: number, outcome: number): void {
    this.tools?.done(tool, t - intendedStart, outcome);
  }

  toolShed(tool: number, reason: ShedReason, t: number): void {
    this.tools?.shed(tool, reason);
    this.series.shed(t);
  }

  tenantOffered(tenant: number, _t: number): void {
    this.tenants?.offered(tenant);
  }

  tenantDone(tenant: number, ok: boolean, withinDeadline: boolean, _t: number): void {
    this.tenants?.done(tenant, ok, withinDeadline);
  }

  entryRefused(tenant: number, _retryAfterMs: number, t: number): void {
    this.tenants?.refused(tenant);
    this.series.shed(t);
  }

  inferenceQueued(estimatedWaitMs: number, _t: number): void {
    const q = this.inference;
    if (q === undefined) return;
    q.queued++;
    q.waitSum += estimatedWaitMs;
    if (estimatedWaitMs > q.waitMax) q.waitMax = estimatedWaitMs;
  }

  inferenceGaveUp(fallback: boolean, _t: number): void {
    const q = this.inference;
    if (q === undefined) return;
    q.gaveUp++;
    if (fallback) q.fallbacks++;
  }

  rootDegraded(_t: number): void {
    this.degradedRoots++;
  }

  userSubmit(resubmit: boolean, impatient: boolean, _t: number): void {
    this.tools?.submit(resubmit, impatient);
  }

  /** Samples an engine layer's state (once per second) for the throttle/budget/breaker timelines. */
  engineState(layer: number, t: number, s: EngineSample): void {
    this.series.engine(layer, t, s);
  }

  /** Whether a fault phase is active at `t` (once per second): the recovery time starts from the last one. */
  faultActive(t: number, active: boolean): void {
    this.series.fault(t, active);
  }

  /** What it counted so far, exactly (see `CollectorState`). */
  state(): CollectorState {
    return {
      roots: {
        offered: this.offered,
        ok: this.ok,
        late: this.late,
        failed: this.failed,
        degraded: this.degradedRoots,
        partial: this.partialRoots ?? null,
      },
      rootLatency: this.rootLatency.encode(),
      layers: this.layerStats.state(),
      upstream: this.upstream.state(),
      series: this.series.state(),
      stream: this.stream?.state() ?? null,
      tools: this.tools?.state() ?? null,
      tenants: this.tenants?.state() ?? null,
      inference: this.inference === undefined ? null : { ...this.inference },
    };
  }

  /**
   * Adds what another collector of the same run counted (`state()` of a fleet worker, whose
   * times are on this run's timeline): counts add up, histograms merge bucket by bucket,
   * series bins add (flags and engine gauges keep the larger). Throws when the state is of
   * another shape (other layers, models, tools).
   */
  absorb(s: CollectorState): void {
    this.offered += s.roots.offered;
    this.ok += s.roots.ok;
    this.late += s.roots.late;
    this.failed += s.roots.failed;
    this.degradedRoots += s.roots.degraded;
    if (this.partialRoots !== undefined) this.partialRoots += s.roots.partial ?? 0;
    this.rootLatency.add(s.rootLatency);
    this.layerStats.absorb(s.layers);
    this.upstream.absorb(s.upstream);
    this.series.absorb(s.series);
    if (s.stream !== null) this.stream?.absorb(s.stream);
    if (s.tools !== null) this.tools?.absorb(s.tools);
    if (s.tenants !== null) this.tenants?.absorb(s.tenants);
    const q = this.inference;
    if (q !== undefined && s.inference !== null) {
      q.queued += s.inference.queued;
      q.gaveUp += s.inference.gaveUp;
      q.fallbacks += s.inference.fallbacks;
      q.waitSum += s.inference.waitSum;
      q.waitMax = Math.max(q.waitMax, s.inference.waitMax);
    }
  }

  /** The run's result. `durationMs` overrides the planned duration (a live run stopped early). */
  result(meta: { name: string; durationMs?: number }): RunResult {
    const durationMs = meta.durationMs ?? this.durationMs;
    const runBins = Math.ceil(durationMs / BIN_MS);
    const bins = Math.max(runBins, this.series.length);
    const [goodput, faults] = this.series.goodputAndFaults(bins);
    return {
      name: meta.name,
      durationMs,
      ...this.headline(durationMs),
      ...this.truncated(),
      roots: this.roots(),
      layers: this.layerResults(),
      upstream: this.upstream.result(),
      recoveryMs: recoveryTime(goodput, faults, runBins, BIN_MS),
      series: this.series.result(0, bins),
      ...this.toolsAndUsers(),
      ...(this.tenants === undefined ? {} : { tenants: this.tenants.result(durationMs) }),
      ...this.inferenceResult(),
    };
  }

  private inferenceResult(): Pick<RunResult, 'inference'> {
    const q = this.inference;
    if (q === undefined) return {};
    const { queued, gaveUp, fallbacks } = q;
    return {
      inference: {
        queued,
        gaveUp,
        fallbacks,
        estimatedWaitMs: { mean: round6(ratio(q.waitSum, queued)), max: round6(q.waitMax) },
      },
    };
  }

  /** `tools` and `users`, for scenarios that have them (absent otherwise, so older results stay as they were). */
  private toolsAndUsers(): Pick<RunResult, 'tools' | 'users'> {
    if (this.tools === undefined) return {};
    return {
      ...(this.tools.tools.length > 0 ? { tools: this.tools.result(this.toolEffects?.()) } : {}),
      ...(this.hasUsers ? { users: this.tools.usersResult() } : {}),
    };
  }

  /** What a live dashboard renders: totals so far, the last 5 s amplification, the last 60 s of series. */
  snapshot(t: number): RunSnapshot {
    const now = binOf(t);
    const from = now - RECENT_BINS + 1;
    const recent = ratio(...this.series.upstreamAndLeaf(from, now + 1));
    return {
      t,
      durationMs: this.durationMs,
      progress: round6(Math.min(1, Math.max(0, t / this.durationMs))),
      // Per second of the run so far, and of the run once past its end (the drain adds no seconds).
      ...this.headline(Math.min(t, this.durationMs)),
      amplificationLast5s: round6(recent),
      ...this.truncated(),
      roots: this.roots(),
      layers: this.layerResults(),
      upstream: this.upstream.result(),
      series: this.series.result(Math.max(0, now - SNAPSHOT_BINS + 1), now + 1),
      ...this.toolsAndUsers(),
      ...(this.tenants === undefined
        ? {}
        : { tenants: this.tenants.result(Math.max(1, Math.min(t, this.durationMs))) }),
      ...this.inferenceResult(),
    };
  }

  private truncated(): { truncatedSuccesses?: number; resumedStreams?: number } {
    if (this.stream === undefined) return {};
    const resumed = this.stream.resumedTotal();
    return { truncatedSuccesses: this.stream.total(), ...(resumed === undefined ? {} : { resumedStreams: resumed }) };
  }

  private layerResults(): LayerResult[] {
    const layers = this.layerStats.result();
    return this.stream === undefined ? layers : this.stream.addTo(layers);
  }

  private headline(elapsedMs: number): { amplification: number; goodput: number; successRate: number } {
    return {
      amplification: round6(ratio(this.upstream.totalAttempts(), this.layerStats.logicalCalls(this.leaf))),
      goodput: round6(ratio(this.ok, elapsedMs / 1000)),
      successRate: round6(ratio(this.ok, this.offered)),
    };
  }

  private roots(): RootResult {
    const h = this.rootLatency;
    const done = this.ok + this.late + this.failed + (this.partialRoots ?? 0);
    return {
      offered: this.offered,
      ok: this.ok,
      late: this.late,
      failed: this.failed,
      unfinished: Math.max(0, this.offered - done),
      ...(this.tools === undefined ? {} : { degraded: this.degradedRoots }),
      ...(this.partialRoots === undefined ? {} : { partial: this.partialRoots }),
      latencyMs: { p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99), max: h.max },
    };
  }
}

function indexOf(kind: string, names: readonly string[], name: string): number {
  const i = names.indexOf(name);
  if (i < 0) throw new OptionError(`unknown ${kind} ${JSON.stringify(name)}; known: ${names.join(', ')}`);
  return i;
}
