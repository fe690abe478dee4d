import { SeededRandom } from '../../engine/random.js';
import { Arrivals } from '../../traffic/arrivals.js';
import { TrafficInterpreter } from '../../traffic/interpreter.js';
import type { UpstreamListener } from '../../upstream/response.js';
import type { EventHandler } from '../../upstream/scheduler.js';
import { UpstreamModel } from '../../upstream/upstream-model.js';
import { ToolService } from '../../upstream/tool-service.js';
import { toolInfos } from '../tool-infos.js';
import { type CollectorState, MetricsCollector } from '../metrics/collector.js';
import type { RunResult, RunSnapshot } from '../metrics/result.js';
import type { RunView } from '../run-view.js';
import type { RunSpec } from '../run-spec.js';
import { EventHeap } from './event-heap.js';
import { engineViews } from '../engine-views.js';
import { sampleSecond } from '../sample-second.js';

const SAMPLE_MS = 1000;

/**
 * A discrete-event run on a virtual clock: seeded randomness split per subsystem, events on a
 * typed-array heap with ties broken by sequence, so the same spec and seed give the same
 * result to the byte. `advanceTo(t)` runs up to a virtual time and stops, so a dashboard can
 * play a run back at any speed; `run()` goes to the end.
 */
export class Simulation implements EventHandler {
  readonly heap = new EventHeap();
  readonly metrics: MetricsCollector;
  readonly traffic: TrafficInterpreter;
  readonly upstream: UpstreamModel;
  readonly endAt: number;
  private readonly arrivals: Arrivals;
  private readonly sampler: number;
  private finishedAt = -1;
  /** The tool service, when the scenario has tools. */
  readonly tools: ToolService | undefined = undefined;

  private get toolCalls() {
    return this.traffic.toolCalls;
  }

  /** `firstSerial`: the first attempt's serial (tests start the count near its wrap). */
  constructor(
    readonly spec: RunSpec,
    options: { firstSerial?: number } = {},
  ) {
    const random = new SeededRandom(spec.seed);
    this.endAt = spec.durationMs + spec.drainMs;
    const layers = spec.traffic.layers.map((l) => l.name);
    const models = spec.upstream.models.map((m) => m.name);
    const streamLayers = spec.traffic.layers.filter((l) => l.stream === true).map((l) => l.name);
    this.metrics = new MetricsCollector({
      layers,
      models,
      durationMs: spec.durationMs,
      streamLayers,
      resumes: streamLayers.length > 0 && spec.upstream.models.some((m) => m.continuation === 'prefill'),
      ...toolInfos(spec),
      ...(spec.traffic.stages === undefined ? {} : { stages: true }),
    });
    // The upstream answers the interpreter, built after it (it is the interpreter's transport).
    // Arguments spelled out: a rest/spread forwarder would build an array per response.
    const listener: UpstreamListener = {
      onResponse: (reqId, status, detail, tokens, retryAfterMs, now) =>
        this.traffic.onResponse(reqId, status, detail, tokens, retryAfterMs, now),
      onStream: (reqId, event, ms, tokens, now) => this.traffic.onStream(reqId, event, ms, tokens, now),
    };
    this.upstream = new UpstreamModel(spec.upstream, this.heap, random.split('upstream'), listener);
    const tools = spec.upstream.tools ?? [];
    if (tools.length > 0) {
      const service = new ToolService(tools, this.heap, random.split('tool-service'), {
        onToolResponse: (reqId, serial, status, retryAfterMs, now) =>
          this.toolCalls?.onToolResponse(reqId, serial, status, retryAfterMs, now),
      });
      this.tools = service;
      this.metrics.toolEffects = () => service.stats();
    }
    this.traffic = new TrafficInterpreter(
      spec.traffic,
      this.heap,
      this.upstream,
      this.metrics,
      random.split('traffic'),
      { transport: this.tools, observer: this.metrics },
      options.firstSerial,
    );
    this.arrivals = new Arrivals(
      spec.traffic.arrival,
      spec.durationMs,
      this.heap,
      (intended, now) => this.traffic.startRoot(intended, now),
      random,
    );
    this.traffic.onRootDone = (now) => this.arrivals.userDone(now);
    this.sampler = this.heap.register(this);
    this.arrivals.begin();
    this.heap.schedule(0, this.sampler, 0, 0);
  }

  /** Virtual time now, ms since the start. */
  get now(): number {
    return this.heap.now();
  }

  /** True once every event has fired or the drain time has run out. */
  get done(): boolean {
    return this.finishedAt >= 0;
  }

  /** Runs events up to virtual time `t` (or the end) and stops there. */
  advanceTo(t: number): void {
    if (this.done) return;
    const until = Math.min(t, this.endAt);
    this.heap.runUntil(until);
    if (this.heap.pending === 0 || until >= this.endAt) this.finishedAt = this.heap.now();
  }

  /** Runs to the end and returns the result. */
  run(): RunResult {
    this.advanceTo(Infinity);
    return this.result();
  }

  result(): RunResult {
    this.flushWasted(this.now);
    // A run stopped early (q in the dashboard) is measured over the time it ran.
    const durationMs = this.done ? this.spec.durationMs : Math.min(this.spec.durationMs, Math.max(1, this.now));
    return this.metrics.result({ name: this.spec.name, durationMs });
  }

  snapshot(): RunSnapshot {
    return this.metrics.snapshot(this.now);
  }

  /** Everything this run counted, exactly (histograms, not percentiles), as `absorb` takes it. */
  counts(): CollectorState {
    this.flushWasted(this.now);
    return this.metrics.state();
  }

  /**
   * Adds another run's `counts()` of the same scenario on the same timeline (another seed, say),
   * so `result()` is that of one run that saw both: `calibrate` pools its fit's seeds this way.
   */
  absorb(counts: CollectorState): void {
    this.metrics.absorb(counts);
  }

  /** What a dashboard shows of this run now. */
  view(name = this.spec.name): RunView {
    const now = this.now;
    this.flushWasted(now);
    const engines = engineViews(this.spec, this.traffic, now);
    const view: RunView = {
      name,
      snapshot: this.metrics.snapshot(now),
      engines,
      upstream: this.upstream.stats(now),
      done: this.done,
    };
    const breakers = this.traffic.toolCalls?.breakerStates(now);
    if (breakers !== undefined && breakers.size > 0 && this.tools !== undefined) {
      const names = this.tools.stats().map((t) => t.name);
      view.toolBreakers = Object.fromEntries([...breakers].map(([i, state]) => [names[i], state]));
    }
    return view;
  }

  /**
   * Work the upstream did for callers that had given up (it goes on unless cancel-on-disconnect)
   * is wasted too; the upstream counts it as it finishes, and this hands it to the metrics.
   */
  private flushWasted(now: number): void {
    const models = this.upstream.stats(now).models;
    for (let i = 0; i < models.length; i++) {
      const delta = models[i].wastedTokens - (this.wastedSeen[i] ?? 0);
      // The leaf layer gave up on these requests (a timeout), so the waste is its.
      if (delta > 0) this.metrics.wasted(delta, now, i, this.spec.traffic.layers.length - 1);
      this.wastedSeen[i] = models[i].wastedTokens;
    }
  }

  private readonly wastedSeen: number[] = [];

  /** The once-a-second sample of engine state and fault activity. */
  handle(_kind: number, _id: number, now: number): void {
    sampleSecond(this.spec, this.traffic, this.metrics, now);
    this.flushWasted(now);
    // Keep sampling while anything else is still to happen.
    if (this.heap.pending > 0) this.heap.schedule(now + SAMPLE_MS, this.sampler, 0, 0);
  }
}
