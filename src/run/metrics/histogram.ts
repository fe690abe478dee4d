import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  initWebAssembly,
  type Histogram,
} from 'hdr-histogram-js';

/** Largest latency a histogram tracks: one hour. Longer values are recorded as one hour. */
export const HISTOGRAM_MAX_MS = 3_600_000;

let wasmReady = false;
let initOnce: Promise<void> | undefined;

/**
 * Loads hdr-histogram-js's WebAssembly build once (about 27 ns per record against 112 ns for
 * the JS build). Idempotent; never rejects: where WebAssembly is unavailable histograms stay
 * on the JS build, which gives the same percentiles.
 */
export function initHistograms(): Promise<void> {
  initOnce ??= initWebAssembly().then(
    () => {
      wasmReady = true;
    },
    () => undefined,
  );
  return initOnce;
}

/** Whether new histograms use the WebAssembly build (after `initHistograms()` resolved). */
export function histogramsUseWasm(): boolean {
  return wasmReady;
}

/**
 * Wasm histograms live in WebAssembly memory that the JS garbage collector does not see; a
 * forgotten `destroy()` would leak it. The registry frees it when the wrapper is collected.
 * The held value is the inner histogram, never the wrapper (that would keep it alive).
 */
const finalizer = new FinalizationRegistry<Histogram>((inner) => inner.destroy());

export interface LatencyHistogramOptions {
  /** Use the WebAssembly build; it needs `initHistograms()` first. @default histogramsUseWasm() */
  wasm: boolean;
}

/**
 * A latency histogram in integer milliseconds, 0 .. 1 h, at 3 significant digits (HDR: any
 * value is reported within 0.1 % of what was recorded). Fixed size, so memory stays flat
 * however many values it takes; `record` does not allocate.
 */
export class LatencyHistogram {
  readonly kind: 'wasm' | 'js';
  private inner: Histogram;
  private destroyed = false;

  constructor(opts?: Partial<LatencyHistogramOptions>) {
    const wasm = (opts?.wasm ?? wasmReady) && wasmReady;
    this.kind = wasm ? 'wasm' : 'js';
    this.inner = LatencyHistogram.create(wasm);
    if (wasm) finalizer.register(this, this.inner, this);
  }

  private static create(wasm: boolean): Histogram {
    return build({
      bitBucketSize: 64,
      autoResize: false,
      lowestDiscernibleValue: 1,
      highestTrackableValue: HISTOGRAM_MAX_MS,
      numberOfSignificantValueDigits: 3,
      useWebAssembly: wasm,
    });
  }

  /** Records one latency; it is rounded to a whole ms and clamped to 0 .. 1 h (NaN counts as 0). */
  record(ms: number): void {
    const v = ms > 0 ? (ms < HISTOGRAM_MAX_MS ? Math.round(ms) : HISTOGRAM_MAX_MS) : 0;
    this.inner.recordValue(v);
  }

  /**
   * The value at percentile `p` (0..100), 0 when empty. HDR answers with the top of the
   * value's bucket (6000 recorded reads back as 6003); capping at the max keeps p99 ≤ max.
   */
  percentile(p: number): number {
    return this.inner.totalCount === 0 ? 0 : Math.min(this.inner.getValueAtPercentile(p), this.inner.maxValue);
  }

  get count(): number {
    return this.inner.totalCount;
  }

  get max(): number {
    return this.inner.totalCount === 0 ? 0 : this.inner.maxValue;
  }

  get mean(): number {
    return this.inner.totalCount === 0 ? 0 : this.inner.mean;
  }

  reset(): void {
    this.inner.reset();
  }

  /** Adds every value of `other` to this one (either build; `other` is left unchanged). */
  merge(other: LatencyHistogram): void {
    if (other.kind === this.kind) {
      this.inner.add(other.inner);
      return;
    }
    // The two builds cannot add each other directly: go through the portable HDR encoding.
    const copy = decodeFromCompressedBase64(encodeIntoCompressedBase64(other.inner), 64, this.kind === 'wasm');
    this.inner.add(copy);
    copy.destroy();
  }

  /** Frees the WebAssembly memory (a no-op for the JS build). Idempotent; the histogram is unusable after. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.kind === 'wasm') finalizer.unregister(this);
    this.inner.destroy();
  }
}
