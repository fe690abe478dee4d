import type { Span } from './span.js';

/**
 * A trace is taken as complete once no span of it ended within this long of the latest end
 * seen in the stream. Exporters send spans as they end, in batches, so a trace's last span
 * (its root) comes at most a few export intervals after its others.
 */
export const TRACE_GRACE_MS = 60_000;
/** Trace ids remembered after they were closed, to tell a late span from a new trace. */
const CLOSED_MEMORY = 1 << 16;
/** Look for traces to close every this many spans. */
const SWEEP_EVERY = 1024;

interface OpenTrace {
  spans: Span[];
  lastEnd: number;
}

/**
 * Groups a stream of spans into traces and hands each on when it is complete (see
 * `TRACE_GRACE_MS`), so memory is bounded by the traces open at once, not by the file.
 */
export class TraceAssembler {
  private readonly open = new Map<string, OpenTrace>();
  private readonly closed = new Set<string>();
  private watermark = Number.NEGATIVE_INFINITY;
  private sinceSweep = 0;
  /** Spans of a trace that had been closed already (left out). */
  lateSpans = 0;
  /** The most traces open at once. */
  peakOpen = 0;
  /** The most spans held at once. */
  peakSpans = 0;
  private held = 0;

  constructor(
    private readonly onTrace: (traceId: string, spans: Span[]) => void,
    private readonly graceMs = TRACE_GRACE_MS,
  ) {}

  add(traceId: string, span: Span): void {
    let t = this.open.get(traceId);
    if (t === undefined) {
      if (this.closed.has(traceId)) {
        this.lateSpans++;
        return;
      }
      t = { spans: [], lastEnd: span.end };
      this.open.set(traceId, t);
      if (this.open.size > this.peakOpen) this.peakOpen = this.open.size;
    }
    t.spans.push(span);
    if (++this.held > this.peakSpans) this.peakSpans = this.held;
    if (span.end > t.lastEnd) t.lastEnd = span.end;
    if (span.end > this.watermark) this.watermark = span.end;
    if (++this.sinceSweep >= SWEEP_EVERY) this.sweep();
  }

  /** Every trace still open is complete: the input ended. */
  flush(): void {
    for (const [id, t] of this.open) this.close(id, t);
  }

  private sweep(): void {
    this.sinceSweep = 0;
    const before = this.watermark - this.graceMs;
    for (const [id, t] of this.open) if (t.lastEnd < before) this.close(id, t);
  }

  private close(id: string, t: OpenTrace): void {
    this.open.delete(id);
    this.held -= t.spans.length;
    this.closed.add(id);
    if (this.closed.size > CLOSED_MEMORY) this.closed.delete(this.closed.values().next().value as string);
    this.onTrace(id, t.spans);
  }
}
