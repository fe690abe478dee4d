import { type EncodedHistogram, LatencyHistogram } from './histogram.js';
import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import type { LayerResult, Percentiles } from './result.js';

export interface StreamStatsState {
  truncated: PackedCounts;
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
  private readonly ttft: Array<LatencyHistogram | undefined>;

  constructor(
    layers: readonly string[],
    private readonly streamed: readonly string[],
  ) {
    this.truncated = new Float64Array(layers.length);
    this.ttft = layers.map((name) => (streamed.includes(name) ? new LatencyHistogram() : undefined));
  }

  streamDone(layer: number, ttftMs: number): void {
    this.ttft[layer]?.record(ttftMs);
  }

  truncatedSuccess(layer: number): void {
    this.truncated[layer]++;
  }

  state(): StreamStatsState {
    return { truncated: packCounts(this.truncated), ttft: this.ttft.map((h) => h?.encode() ?? null) };
  }

  absorb(s: StreamStatsState): void {
    addCounts(this.truncated, s.truncated);
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

  /** The layers' results with `truncatedSuccesses` (every layer) and `ttftMs` (streamed layers). */
  addTo(layers: LayerResult[]): LayerResult[] {
    return layers.map((l, i) => {
      const h = this.ttft[i];
      const ttftMs: Percentiles | undefined =
        h === undefined ? undefined : { p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99) };
      return { ...l, truncatedSuccesses: this.truncated[i], ...(ttftMs === undefined ? {} : { ttftMs }) };
    });
  }

  /** The names of the streamed layers. */
  get layers(): readonly string[] {
    return this.streamed;
  }
}
