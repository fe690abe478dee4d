import { Reservoir } from './reservoir.js';

/** Retries at one place of the tree, as they happened. */
export class RetryStats {
  /** Logical calls by how many attempts they made. */
  readonly byAttempts = new Map<number, number>();
  /** Logical calls whose last attempt failed, by attempts made. */
  readonly failedByAttempts = new Map<number, number>();
  /** Waits before retry number i (index i − 1), ms: from an attempt's end to the next one's start. */
  readonly gaps: Reservoir[] = [];
  /** Waits before retries after an attempt that carried a retry-after hint. */
  hinted = 0;
  /** … of which waited at least (about) the hint. */
  honoured = 0;
  /** Retries seen as HTTP attempts under one call's span. */
  httpRetries = 0;
  /**
   * Retries seen as sibling spans of one logical call: `sure` of them followed a failure with a
   * retryable status (408, 409, 429, 5xx), `unsure` a failure with no status recorded; the rest
   * one with a status no client retries (a 4xx), which may be a call made again on purpose.
   */
  siblingRetries = 0;
  sure = 0;
  unsure = 0;
  /** Repeats of the same call after a success (not retries). */
  repeats = 0;
  /** Attempts that carried `x-stainless-retry-count`. */
  stainlessCounted = 0;
  /** Failed attempts, and how many of them were retried. */
  failures = 0;
  retriedFailures = 0;
  /** Statuses of failed attempts that were not retried although they were not the last allowed. */
  readonly notRetried = new Map<string, number>();

  call(attempts: number, failed: boolean): void {
    this.byAttempts.set(attempts, (this.byAttempts.get(attempts) ?? 0) + 1);
    if (failed) this.failedByAttempts.set(attempts, (this.failedByAttempts.get(attempts) ?? 0) + 1);
  }

  gap(retry: number, ms: number): void {
    while (this.gaps.length < retry) this.gaps.push(new Reservoir(1024));
    this.gaps[retry - 1].add(ms);
  }

  get retries(): number {
    return this.httpRetries + this.siblingRetries;
  }
}

/** Per model: attempts by outcome, and what an answer took. */
export class ModelStats {
  attempts = 0;
  /** Attempts by outcome: the HTTP status (`200`, `429`), or `error` for a failure with none recorded. */
  readonly statuses = new Map<string, number>();
  /** Successful attempts: (duration ms, output tokens). */
  readonly answers = new Reservoir(4096, true);
  /** Time to first token, ms, where a span recorded it. */
  readonly firstToken = new Reservoir(4096);
  /** Successful attempts whose output tokens were not recorded. */
  untokened = 0;
  logical = 0;

  status(s: string): void {
    this.statuses.set(s, (this.statuses.get(s) ?? 0) + 1);
  }
}

/** One level of agents (level 0 is the trace's root task itself). */
export class LevelStats {
  /** Spans at this level (attempts, sibling retries included). */
  spans = 0;
  logical = 0;
  /** Logical calls that failed in the end. */
  failed = 0;
  readonly latency = new Reservoir(4096);
  /** Agent children per attempt (spans at the next level, logical calls). */
  readonly agentKids = new Map<number, number>();
  /** Logical model calls per attempt. */
  readonly modelKids = new Map<number, number>();
  /** Attempts with 2+ children whose children never overlapped, and those whose did. */
  sequential = 0;
  parallel = 0;
  /** Logical tool calls by tool: calls, and attempts that made at least one. */
  readonly tools = new Map<string, ToolStats>();
  readonly retry = new RetryStats();
  /** `gen_ai.agent.name` (or the span name) by count. */
  readonly names = new Map<string, number>();
}

export class ToolStats {
  calls = 0;
  spans = 0;
  failed = 0;
  readonly latency = new Reservoir(2048);
  readonly retry = new RetryStats();
}

/** Everything `calibrate` learned from the traces, in memory bounded by its reservoirs and one start/end per root task. */
export class Observations {
  readonly files: string[] = [];
  spans = 0;
  traces = 0;
  /** Traces with no GenAI span (left out). */
  plainTraces = 0;
  genAiSpans = 0;
  readonly levels: LevelStats[] = [];
  /** Traces whose root task is exactly one agent span. */
  singleAgentTop = 0;
  /** Model calls: the leaf. */
  readonly leaf = {
    logical: 0,
    attempts: 0,
    failed: 0,
    latency: new Reservoir(4096),
    retry: new RetryStats(),
    inTok: new Reservoir(4096),
    outTok: new Reservoir(4096),
    tokensIn: 0,
    tokensOut: 0,
    /** Model calls whose usage was not recorded. */
    untokened: 0,
    /** Spans that recorded a first-token time. */
    streamed: 0,
    scopes: new Map<string, number>(),
  };
  readonly models = new Map<string, ModelStats>();
  /** Root tasks' starts and ends, ms since the epoch. */
  rootStart = new Float64Array(1024);
  rootEnd = new Float64Array(1024);
  roots = 0;
  rootsFailed = 0;
  /** Upstream attempts and failed ones per second (epoch seconds). */
  readonly bins = new Map<number, [number, number]>();
  /** Spans of kinds not recognised, by name. */
  readonly unknown = new Map<string, number>();
  /** Spans whose parent is not in their trace (taken as tops). */
  orphans = 0;
  /** HTTP client spans not under a model call (left out). */
  strayHttp = 0;
  lateSpans = 0;
  peakOpenTraces = 0;
  peakSpansHeld = 0;
  first = Number.POSITIVE_INFINITY;
  last = Number.NEGATIVE_INFINITY;

  level(i: number): LevelStats {
    while (this.levels.length <= i) this.levels.push(new LevelStats());
    return this.levels[i];
  }

  model(name: string): ModelStats {
    let m = this.models.get(name);
    if (m === undefined) this.models.set(name, (m = new ModelStats()));
    return m;
  }

  root(start: number, end: number, failed: boolean): void {
    if (this.roots === this.rootStart.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.rootStart = grow(this.rootStart);
      this.rootEnd = grow(this.rootEnd);
    }
    this.rootStart[this.roots] = start;
    this.rootEnd[this.roots] = end;
    this.roots++;
    if (failed) this.rootsFailed++;
  }

  bin(at: number, failed: boolean): void {
    const k = Math.floor(at / 1000);
    let b = this.bins.get(k);
    if (b === undefined) this.bins.set(k, (b = [0, 0]));
    b[0]++;
    if (failed) b[1]++;
  }
}

export function bump<K>(m: Map<K, number>, k: K, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}
