import type { IdempotencyStore } from '../../engine/idempotency-store.js';
import { SeededRandom } from '../../engine/random.js';
import { Arrivals } from '../../traffic/arrivals.js';
import { TrafficInterpreter } from '../../traffic/interpreter.js';
import type { UpstreamListener } from '../../upstream/response.js';
import type { EventHandler } from '../../upstream/scheduler.js';
import type { UpstreamStats } from '../../upstream/upstream-model.js';
import { MetricsCollector, type MetricsCollectorOptions } from '../metrics/collector.js';
import type { EngineStores } from '../../traffic/engine-replicas.js';
import { rootFilter, type RootShare } from '../../traffic/root-share.js';
import type { RunResult } from '../metrics/result.js';
import type { HopView, RunView } from '../run-view.js';
import type { RunSpec } from '../run-spec.js';
import { HttpToolTransport } from './http-tool-transport.js';
import { HttpTransport, type HttpTransportOptions } from './http-transport.js';
import { toolInfos } from '../tool-infos.js';
import type { ToolServiceStats } from '../../upstream/tool-service.js';
import { TargetRefusedError } from './live-errors.js';
import { RealTimeScheduler } from '../real-time-scheduler.js';
import { engineViews } from '../engine-views.js';
import { sampleSecond } from '../sample-second.js';

/** Where a live run sends its requests. */
export interface LiveUpstream {
  /** Base URL: `http://127.0.0.1:8080`, or a gateway's (a path prefix is kept). */
  url: string;
  /**
   * The upstream's own counters, when it can be asked (the in-process fake upstream): busy
   * slots and queue for the dashboard, and work done for callers that gave up (wasted tokens).
   * Without it the dashboard shows what this client sees: its requests in flight.
   */
  stats?: () => UpstreamStats;
  /**
   * With a gateway under test (`--upstream`): hop 2, behind the target, so far, given what
   * this client sent it (the dashboard's hop lines). `stats` is then not given: the upstream
   * behind a gateway does not answer this client, and its wasted tokens are hop 2's.
   */
  hop?: (sent: number) => HopView;
  /**
   * The tool service's own counters (executions, duplicates per intent), when the scenario has
   * tools and the server can be asked: the duplicates of a live run are the server's count.
   */
  toolStats?: () => readonly ToolServiceStats[];
  /**
   * The engine's idempotency store for keyed tool calls (`idempotency: redis`): keys taken
   * before each request, shared by every process using it. Without it the tool service keeps them.
   */
  idempotencyStore?: IdempotencyStore;
}

/** Answers looked at before a target that refuses most of them stops the run. */
const REFUSAL_MIN_ANSWERS = 20;

export interface LiveRunOptions extends HttpTransportOptions {
  /** A fleet worker's share of the run: only its roots (or users) start here, at their times in the whole run. */
  share?: RootShare;
  /** Where the engines keep their state when it is shared beyond this process (a fleet's Redis). */
  engineStores?: EngineStores;
}

/** What a run's metrics collector is built with: the same for a run and for the merge of a fleet's shares of it. */
export function collectorOptions(spec: RunSpec): MetricsCollectorOptions {
  return {
    layers: spec.traffic.layers.map((l) => l.name),
    models: spec.upstream.models.map((m) => m.name),
    durationMs: spec.durationMs,
    streamLayers: spec.traffic.layers.filter((l) => l.stream === true).map((l) => l.name),
    ...toolInfos(spec),
    ...(spec.traffic.stages === undefined ? {} : { stages: true }),
  };
}

const K_SAMPLE = 1;
const K_POOL = 2;
const K_END = 3;
const K_DRAIN = 4;
const SAMPLE_MS = 1000;
/** Pool starvation comes and goes within a second: sample it ten times as often. */
const POOL_SAMPLE_MS = 100;

type State = 'ready' | 'running' | 'finished';

/**
 * A run on the real clock: the simulator's traffic interpreter, arrivals and metrics, driven
 * by real timers (`RealTimeScheduler`) and real HTTP (`HttpTransport`, an undici pool) instead of
 * the virtual heap and the in-process upstream model. Same `RunResult`, same `RunView`, plus
 * a `live` block with the pool's figures.
 *
 * `start(upstream)` starts it; after `durationMs` no new root arrives, and it is over when no
 * call is left or the drain time has run out (requests still in flight are then aborted).
 * `stop()` ends it early (Ctrl-C) and keeps what it measured, a partial result. `finished`
 * settles when it is over, and rejects if a handler threw (a bug: the run stops there).
 */
export class LiveRun implements EventHandler {
  readonly scheduler: RealTimeScheduler;
  readonly metrics: MetricsCollector;
  readonly traffic: TrafficInterpreter;
  readonly transport: HttpTransport;
  /** Tool calls over HTTP (`POST /_stormlab/tools/{name}`), when the scenario has tools. */
  readonly toolTransport: HttpToolTransport | undefined;
  readonly endAt: number;
  /** Settles when the run is over (done or stopped). */
  readonly finished: Promise<void>;
  private readonly arrivals: Arrivals;
  private readonly handlerId: number;
  private state: State = 'ready';
  private finishedAt = 0;
  private stopped = false;
  private wasStarted = false;
  private failure: unknown = undefined;
  private stats: (() => UpstreamStats) | undefined;
  private hop: ((sent: number) => HopView) | undefined;
  private settle!: (err?: unknown) => void;
  private readonly wastedSeen: number[] = [];

  constructor(
    readonly spec: RunSpec,
    options: LiveRunOptions = {},
  ) {
    const random = new SeededRandom(spec.seed);
    this.endAt = spec.durationMs + spec.drainMs;
    this.scheduler = new RealTimeScheduler({ onError: (err) => this.fail(err) });
    const models = spec.upstream.models.map((m) => m.name);
    this.metrics = new MetricsCollector(collectorOptions(spec));
    const listener: UpstreamListener = {
      onResponse: (reqId, status, detail, tokens, retryAfterMs, now) => {
        this.traffic.onResponse(reqId, status, detail, tokens, retryAfterMs, now);
        if (status >= 400 && status < 500) this.checkRefusals();
        this.checkDone();
      },
      // A layer's own `stream`: the first token of its requests, as the simulator's upstream tells it.
      onStream: (reqId, event, ms, tokens, now) => this.traffic.onStream(reqId, event, ms, tokens, now),
    };
    this.transport = new HttpTransport(models, listener, () => this.scheduler.now(), options);
    this.transport.onError = (err) => this.fail(err);
    this.toolTransport = liveToolTransport(
      spec,
      {
        onToolResponse: (reqId, serial, status, retryAfterMs, now) => {
          this.traffic.toolCalls?.onToolResponse(reqId, serial, status, retryAfterMs, now);
          this.checkDone();
        },
      },
      () => this.scheduler.now(),
    );
    // The simulator's seed splits: the same roots, fan-outs and token counts in both modes. A
    // fleet's share draws its own (the same seed and share, the same draws).
    const share = options.share;
    const traffic = random.split('traffic');
    this.traffic = new TrafficInterpreter(
      spec.traffic,
      this.scheduler,
      this.transport,
      this.metrics,
      share === undefined || share.of <= 1 ? traffic : traffic.split(`share:${share.index}`),
      { transport: this.toolTransport, observer: this.metrics },
      undefined,
      options.engineStores,
    );
    this.arrivals = new Arrivals(
      spec.traffic.arrival,
      spec.durationMs,
      this.scheduler,
      (intended, now) => this.traffic.startRoot(intended, now),
      random,
      0, // real time moves by itself: a closed loop with no think time goes as fast as its answers come
      rootFilter(spec.seed, share),
    );
    this.traffic.onRootDone = (now) => this.arrivals.userDone(now);
    this.handlerId = this.scheduler.register(this);
    this.scheduler.afterFire = () => this.checkDone();
    this.finished = new Promise<void>((resolve, reject) => {
      this.settle = (err) => (err === undefined ? resolve() : reject(err));
    });
    // A caller that only polls `done` must not see an unhandled rejection.
    this.finished.catch(() => {});
  }

  /**
   * Starts the run against `upstream`; resolves when it is over (as `finished`). `originMs`
   * (on `preciseClock`) puts time 0 there rather than now: a fleet worker that starts after
   * the agreed instant starts late, its roots already due fire at once and count from when
   * they were due.
   */
  start(upstream: LiveUpstream, originMs?: number): Promise<void> {
    if (this.state !== 'ready') throw new Error('a live run starts once');
    this.state = 'running';
    this.wasStarted = true;
    this.stats = upstream.stats;
    this.hop = upstream.hop;
    this.transport.open(upstream.url);
    this.toolTransport?.open(upstream.url, upstream.idempotencyStore);
    const toolStats = upstream.toolStats;
    const tools = this.toolTransport;
    if (toolStats !== undefined)
      this.metrics.toolEffects = tools === undefined ? toolStats : () => tools.withLocal(toolStats());
    this.scheduler.restart(originMs);
    this.arrivals.begin();
    const s = this.scheduler;
    s.schedule(0, this.handlerId, K_SAMPLE, 0);
    s.schedule(0, this.handlerId, K_POOL, 0);
    s.schedule(this.spec.durationMs, this.handlerId, K_END, 0);
    s.schedule(this.endAt, this.handlerId, K_DRAIN, 0);
    return this.finished;
  }

  /** Ends the run now (Ctrl-C): no new roots, requests in flight aborted, the result is partial. */
  stop(): void {
    if (this.state === 'finished') return;
    this.stopped = true;
    this.finish();
  }

  /** Real time since the start, ms; frozen once the run is over. */
  get now(): number {
    return this.state === 'running' ? this.scheduler.now() : this.finishedAt;
  }

  /** Started (and perhaps over since). */
  get started(): boolean {
    return this.wasStarted;
  }

  get done(): boolean {
    return this.state === 'finished';
  }

  /** Stopped before its natural end. */
  get interrupted(): boolean {
    return this.stopped;
  }

  result(): RunResult {
    const now = this.now;
    this.flushWasted(now);
    // A run stopped early is measured over the time it ran, as a simulation stopped early is.
    const durationMs = this.stopped
      ? Math.min(this.spec.durationMs, Math.max(1, Math.round(now)))
      : this.spec.durationMs;
    return { ...this.metrics.result({ name: this.spec.name, durationMs }), live: this.transport.figures() };
  }

  /** What a dashboard shows of this run now (the same view a simulation gives). */
  view(name = this.spec.name): RunView {
    const now = this.now;
    this.flushWasted(now);
    const engines = engineViews(this.spec, this.traffic, now);
    const view: RunView = {
      name,
      snapshot: this.metrics.snapshot(now),
      engines,
      upstream: this.upstreamStats(),
      done: this.done,
    };
    if (this.hop !== undefined) view.hops = this.hop(this.sent());
    return view;
  }

  /** Requests this client wrote to the target: its leaf attempts, less those given up on before they left. */
  sent(): number {
    return this.transport.written;
  }

  /** Stops the run if it still runs and closes its connections. */
  async close(): Promise<void> {
    this.stop();
    await this.transport.close();
    await this.toolTransport?.close();
  }

  handle(kind: number, _id: number, now: number): void {
    if (kind === K_POOL) {
      this.transport.samplePool();
      this.scheduler.schedule(now + POOL_SAMPLE_MS, this.handlerId, K_POOL, 0);
    } else if (kind === K_SAMPLE) {
      this.sample(now);
      this.scheduler.schedule(now + SAMPLE_MS, this.handlerId, K_SAMPLE, 0);
    } else if (kind === K_DRAIN) {
      this.finish();
    }
    // K_END: the check after every pass of the scheduler sees whether anything is left.
  }

  /** The once-a-second sample of engine state and fault activity, as the simulator takes it. */
  private sample(now: number): void {
    sampleSecond(this.spec, this.traffic, this.metrics, now);
    this.flushWasted(now);
  }

  /** Stops the run when most answers so far are refusals (4xx but 408, 429 and context length). */
  private checkRefusals(): void {
    const t = this.transport;
    if (t.answers >= REFUSAL_MIN_ANSWERS && t.refusals * 2 > t.answers && t.firstRefusal !== undefined)
      this.fail(new TargetRefusedError(t.refusals, t.answers, t.firstRefusal));
  }

  /** Over once the arrivals are past and no call is left (or the drain ran out, see `handle`). */
  private checkDone(): void {
    if (this.state !== 'running') return;
    if (this.arrivals.pending === 0 && this.traffic.calls.live === 0 && this.scheduler.now() >= this.spec.durationMs)
      this.finish();
  }

  private finish(): void {
    if (this.state === 'finished') return;
    this.finishedAt = this.state === 'running' ? Math.min(this.scheduler.now(), this.endAt) : 0;
    this.state = 'finished';
    this.scheduler.stop();
    this.transport.abortAll();
    this.toolTransport?.abortAll();
    this.flushWasted(this.finishedAt);
    this.settle(this.failure);
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    this.finish();
  }

  private upstreamStats(): UpstreamStats {
    return this.stats?.() ?? this.transport.upstreamStats();
  }

  /** Work the upstream reports it did for callers that had given up, handed to the metrics (as in `Simulation`). */
  private flushWasted(now: number): void {
    if (this.stats === undefined) return;
    const models = this.stats().models;
    const leaf = this.spec.traffic.layers.length - 1;
    for (let i = 0; i < models.length && i < this.metrics.models.length; i++) {
      const delta = models[i].wastedTokens - (this.wastedSeen[i] ?? 0);
      if (delta > 0) this.metrics.wasted(delta, now, i, leaf);
      this.wastedSeen[i] = models[i].wastedTokens;
    }
  }
}

/** The tool transport of a scenario with tool calls: each tool's calls wait at most their longest timeout. */
function liveToolTransport(
  spec: RunSpec,
  listener: ConstructorParameters<typeof HttpToolTransport>[2],
  now: () => number,
): HttpToolTransport | undefined {
  const tools = spec.upstream.tools ?? [];
  const calls = spec.traffic.layers.flatMap((l) => l.tools ?? []);
  if (tools.length === 0 || calls.length === 0) return undefined;
  const timeouts = tools.map((t) =>
    Math.max(0, ...calls.filter((c) => c.tool === t.name).map((c) => c.timeoutMs ?? Number.POSITIVE_INFINITY)),
  );
  return new HttpToolTransport(
    tools.map((t) => t.name),
    timeouts,
    listener,
    now,
  );
}
