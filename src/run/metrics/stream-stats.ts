import { type EncodedHistogram, LatencyHistogram } from './histogram.js';
import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import type { LayerResult, Percentiles } from './result.js';

export interface StreamStatsState {
  truncated: PackedCounts;
  /** Runs that can resume streams only. */
  resumed?: PackedCounts;
  ttft: Array<EncodedHistogram | null>;
}

/**
 * What streamed calls add to a run's figures: per layer, the successes that hold a cut stream
 * taken as a complete answer (a streamed layer's own, and the calls above that got one from
 * below), and, for the streamed layers, the time to first token of their successful calls —
 * from the call's start, so the retries and fallbacks before the answer count. Only runs with
 * a streamed layer have any of it: the figures of other runs stay what they were.
 */
export class StreamStats {
  private readonly truncated: Float64Array;
  /** Successes whose committed stream broke and was continued (`stream.resume`): runs that can resume only. */
  private readonly resumed: Float64Array | undefined;
  private readonly ttft: Array<LatencyHistogram | undefined>;

  constructor(
    layers: readonly string[],
    private readonly streamed: readonly string[],
    resumes = false,
  ) {
    this.truncated = new Float64Array(layers.length);
    this.resumed = resumes ? new Float64Array(layers.length) : undefined;
    this.ttft = layers.map((name) => (streamed.includes(name) ? new LatencyHistogram() : undefined));
  }

  streamDone(layer: number, ttftMs: number): void {
    this.ttft[layer]?.record(ttftMs);
  }

  truncatedSuccess(layer: number): void {
    this.truncated[layer]++;
  }

  /** A streamed call at `layer` succeeded with a stream that broke and was continued. */
  resumedSuccess(layer: number): void {
    if (this.resumed !== undefined) this.resumed[layer]++;
  }

  state(): StreamStatsState {
    return {
      truncated: packCounts(this.truncated),
      ...(this.resumed === undefined ? {} : { resumed: packCounts(this.resumed) }),
      ttft: this.ttft.map((h) => h?.encode() ?? null),
    };
  }

  absorb(s: StreamStatsState): void {
    addCounts(this.truncated, s.truncated);
    if (this.resumed !== undefined && s.resumed !== undefined) addCounts(this.resumed, s.resumed);
    s.ttft.forEach((h, i) => {
      if (h !== null) this.ttft[i]?.add(h);
    });
  }

  /** Cut streams taken as answers: the streamed layers' count (each one LLM answer). */
  total(): number {
    let n = 0;
    this.ttft.forEach((h, i) => h !== undefined && (n += this.truncated[i]));
    return n;
  }

  /** Resumed streams that became answers: the streamed layers' count; undefined in a run that cannot resume. */
  resumedTotal(): number | undefined {
    const r = this.resumed;
    if (r === undefined) return undefined;
    let n = 0;
    this.ttft.forEach((h, i) => h !== undefined && (n += r[i]));
    return n;
  }

  /** The layers' results with `truncatedSuccesses` (every layer), `ttftMs` and `resumedStreams` (streamed layers). */
  addTo(layers: LayerResult[]): LayerResult[] {
    return layers.map((l, i) => {
      const h = this.ttft[i];
      const ttftMs: Percentiles | undefined =
        h === undefined ? undefined : { p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99) };
      const resumed = h === undefined || this.resumed === undefined ? {} : { resumedStreams: this.resumed[i] };
      return { ...l, truncatedSuccesses: this.truncated[i], ...(ttftMs === undefined ? {} : { ttftMs }), ...resumed };
    });
  }

  /** The names of the streamed layers. */
  get layers(): readonly string[] {
    return this.streamed;
  }
}
