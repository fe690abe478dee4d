import { SHED_REASONS, type ShedReason } from '../../engine/errors.js';
import { type EncodedHistogram, LatencyHistogram } from './histogram.js';
import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import type { LayerResult } from './result.js';
import { ratio, round6 } from './round.js';

/** Index of each shed reason in the per-layer shed counters: an object lookup, no allocation. */
export const SHED_INDEX: Readonly<Record<ShedReason, number>> = Object.fromEntries(
  SHED_REASONS.map((reason, i) => [reason, i]),
) as Record<ShedReason, number>;

// Per-layer scalar counters, flat: layer * FIELDS + field.
const LOGICAL = 0;
const ATTEMPTS = 1;
const RETRIES = 2;
const OK = 3;
const FAILED = 4;
const WASTED = 5;
const FIELDS = 6;

export interface LayerStatsState {
  counts: PackedCounts;
  sheds: PackedCounts;
  latency: EncodedHistogram[];
}

/** Call counters, shed counters and a latency histogram for each layer of the call tree. */
export class LayerStats {
  readonly names: readonly string[];
  private readonly counts: Float64Array;
  private readonly sheds: Float64Array;
  private readonly latency: LatencyHistogram[];

  constructor(names: readonly string[]) {
    this.names = names;
    this.counts = new Float64Array(names.length * FIELDS);
    this.sheds = new Float64Array(names.length * SHED_REASONS.length);
    this.latency = names.map(() => new LatencyHistogram());
  }

  logical(layer: number, n: number): void {
    this.counts[layer * FIELDS + LOGICAL] += n;
  }

  attempt(layer: number, isRetry: boolean): void {
    this.counts[layer * FIELDS + ATTEMPTS]++;
    if (isRetry) this.counts[layer * FIELDS + RETRIES]++;
  }

  done(layer: number, latencyMs: number, ok: boolean): void {
    this.counts[layer * FIELDS + (ok ? OK : FAILED)]++;
    this.latency[layer].record(latencyMs);
  }

  /** Tokens whose result this layer's calls threw away (a failed or abandoned attempt). */
  wasted(layer: number, tokens: number): void {
    this.counts[layer * FIELDS + WASTED] += tokens;
  }

  shed(layer: number, reason: ShedReason): void {
    this.sheds[layer * SHED_REASONS.length + SHED_INDEX[reason]]++;
  }

  logicalCalls(layer: number): number {
    return this.counts[layer * FIELDS + LOGICAL];
  }

  /** Every count and histogram, exactly, as JSON (`absorb` adds them to another run's). */
  state(): LayerStatsState {
    return {
      counts: packCounts(this.counts),
      sheds: packCounts(this.sheds),
      latency: this.latency.map((h) => h.encode()),
    };
  }

  /** Adds what another collector of the same layers counted (a fleet worker's share). */
  absorb(s: LayerStatsState): void {
    addCounts(this.counts, s.counts);
    addCounts(this.sheds, s.sheds);
    if (s.latency.length !== this.latency.length) throw new Error('layer histograms of another call tree');
    s.latency.forEach((h, i) => this.latency[i].add(h));
  }

  result(): LayerResult[] {
    return this.names.map((name, i) => this.layerResult(name, i));
  }

  private layerResult(name: string, i: number): LayerResult {
    const c = (field: number): number => this.counts[i * FIELDS + field];
    const shed: Partial<Record<ShedReason, number>> = {};
    SHED_REASONS.forEach((reason, r) => {
      const n = this.sheds[i * SHED_REASONS.length + r];
      if (n > 0) shed[reason] = n;
    });
    const h = this.latency[i];
    return {
      name,
      logicalCalls: c(LOGICAL),
      attempts: c(ATTEMPTS),
      retries: c(RETRIES),
      amplification: round6(ratio(c(ATTEMPTS), c(LOGICAL))),
      ok: c(OK),
      failed: c(FAILED),
      successRate: round6(ratio(c(OK), c(OK) + c(FAILED))),
      wastedTokens: round6(c(WASTED)),
      latencyMs: { p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99) },
      shed,
    };
  }
}
