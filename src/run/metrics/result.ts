import type { ShedReason } from '../../engine/errors.js';
import type { InferenceResult, TenantResult, ToolResult, UsersResult } from './tool-result.js';

export type { InferenceResult, TenantResult, ToolResult, UsersResult } from './tool-result.js';

/**
 * The versioned result JSON (`stormlab.result/v1`). Same scenario + seed in `sim` mode ⇒
 * byte-identical JSON, except `timing`, the only place wall-clock figures may go. Floats are
 * rounded to 6 significant digits; latencies are whole milliseconds from the intended start
 * (no coordinated omission).
 */
export const RESULT_SCHEMA = 'stormlab.result/v1';

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

export interface RootResult {
  offered: number;
  /** Completed successfully within their deadline. */
  ok: number;
  /** Completed successfully but after their deadline (not goodput). */
  late: number;
  failed: number;
  /** Offered but not finished when the run ended. */
  unfinished: number;
  /** Of `ok`, those with a tool call below them degraded (a draft instead of the send); scenarios with tools only. */
  degraded?: number;
  /**
   * Scenarios with stage budgets only: root tasks that ended with a stage below out of budget
   * returning what it had (what was retrieved, a draft). Counted apart from ok, late and failed.
   */
  partial?: number;
  /** Every finished root (ok, late or failed), from its intended start. */
  latencyMs: Percentiles & { max: number };
}

export interface LayerResult {
  name: string;
  logicalCalls: number;
  attempts: number;
  retries: number;
  /** attempts ÷ logicalCalls. */
  amplification: number;
  /** Logical calls finished ok and failed. */
  ok: number;
  failed: number;
  /** ok ÷ (ok + failed). */
  successRate: number;
  latencyMs: Percentiles;
  /** Tokens whose results this layer threw away: spent on attempts of its calls that failed or that it gave up on. */
  wastedTokens: number;
  /** Calls shed locally, by reason; only reasons with a non-zero count appear. */
  shed: Partial<Record<ShedReason, number>>;
  /** Runs with a streamed layer only: successes holding a cut stream taken as complete (this layer's or one below). */
  truncatedSuccesses?: number;
  /** Streamed layers of runs that can resume only: successes whose committed stream broke and was continued on a declaring model. */
  resumedStreams?: number;
  /** Streamed layers only: time to first token of the successful calls, from the call's start (retries included). */
  ttftMs?: Percentiles;
}

export interface UpstreamShare {
  /** Shares of answered upstream attempts (every status counted, timeouts included). */
  '429': number;
  /** 500–599, 529 included. */
  '5xx': number;
  /** No answer (hang, timed out) or connection reset. */
  timeout: number;
}

export interface UpstreamFigures {
  attempts: number;
  /**
   * Attempts by outcome: HTTP statuses by number (`"200"`, `"429"`, `"529"`), `"reset"` for a
   * connection reset (status 0), `"timeout"` for no answer (status -1), `"other"` for
   * anything else. Only non-zero entries appear.
   */
  status: Record<string, number>;
  /** 429s by the limit they name: requests/min, tokens/min, or `insufficient_quota`. */
  rateLimited: { requests: number; tokens: number; quota: number };
  share: UpstreamShare;
  /** Tokens the upstream spent on attempts whose caller had already given up or failed. */
  wastedTokens: number;
  tokensServed: number;
}

export interface ModelResult extends UpstreamFigures {
  name: string;
}

export interface UpstreamResult extends UpstreamFigures {
  models: ModelResult[];
}

/** Time series of the engine state at one engine layer, sampled once per second. */
export interface EngineSeries {
  layer: string;
  dropProbability: number[];
  budgetBalance: number[];
  /** 1 when a breaker (of any replica) was open at a sample in that second. */
  breakerOpen: number[];
  /** A layer run as several replicas (`layers[i].replicas`): how many. Absent for one. */
  replicas?: number;
  /** With `replicas`: how many replicas had a breaker open, the most at a sample in that second. */
  replicasOpen?: number[];
}

/** Per-second series; index i covers [i·binMs, (i+1)·binMs) of the run. */
export interface SeriesResult {
  binMs: number;
  /** Index of the first bin in these arrays (0 in a result; later in a live snapshot). */
  fromBin: number;
  offered: number[];
  /** Roots completed ok within their deadline: goodput per second. */
  ok: number[];
  /** Calls shed locally, every layer and reason. */
  shed: number[];
  upstreamAttempts: number[];
  leafCalls: number[];
  status429: number[];
  /** 500–599, 529 included. */
  status5xx: number[];
  /** Upstream timeouts (no answer) and connection resets. */
  timeouts: number[];
  /** 1 while a fault phase was active. */
  faultActive: number[];
  engine: EngineSeries[];
}

export interface RunResult {
  /** The variant's name (e.g. `naive`, `engine`). */
  name: string;
  durationMs: number;
  /** Upstream attempts ÷ logical leaf calls. */
  amplification: number;
  /** Roots completed ok within their deadline, per second of the run's duration. */
  goodput: number;
  /** roots.ok ÷ roots.offered. */
  successRate: number;
  /** Runs with a streamed layer only: cut streams taken as complete answers (the streamed layers' `truncatedSuccesses`). */
  truncatedSuccesses?: number;
  /** Runs whose streamed layer can resume (a model declares `continuation: prefill`): answers whose broken stream was continued. */
  resumedStreams?: number;
  roots: RootResult;
  layers: LayerResult[];
  upstream: UpstreamResult;
  /**
   * After the last fault phase ended, the time until goodput per second was back to ≥ 90 % of
   * its pre-fault average: 0 if it never dropped (or there was no fault), null if it did not
   * recover within the run (or no second before the first fault gives a baseline).
   */
  recoveryMs: number | null;
  series: SeriesResult;
  /** Live runs only: the HTTP client's connection pool. */
  live?: LiveFigures;
  /** Per tool, when the scenario's tree makes tool calls: executions, duplicates, conflicts, degraded calls. */
  tools?: ToolResult[];
  /** When the scenario's users may resubmit: their submissions, as the outermost layer of amplification. */
  users?: UsersResult;
  /** Per tenant, when the scenario names tenants or an entry limit. */
  tenants?: TenantResult[];
  /** The last layer's inference queue, when the scenario limits inference. */
  inference?: InferenceResult;
  /**
   * What ran: the scenario document after the variant's overrides and then the command line's
   * (`--set`, `--duration`, `--seed`), and each field they set. Written by `run` and `compare`;
   * absent in files written before it was.
   */
  effective?: EffectiveScenario;
}

/**
 * The scenario that actually ran. Overrides apply in one order — the file, then the variant's,
 * then the command line's, which win — so `document`, saved as a scenario file and run as
 * written, runs the same thing again.
 */
export interface EffectiveScenario {
  /** The document as written, with every override applied, before defaults are filled in. */
  document: unknown;
  /** Each field the variant or the command line set, once, in the order they applied. */
  overrides: OverrideRecord[];
}

/** One field a variant or the command line set (the last setting of that path; earlier ones it replaced are folded in). */
export interface OverrideRecord {
  /** The path as written: `layers[*].retry.attempts`. */
  path: string;
  /** What it was set to; null removes the field (its default applies). */
  value: unknown;
  /** Where the value came from: `variant naive`, `--set`, `--duration`, `--seed`. */
  from: string;
  /** The value it replaced, when the field had one (every element's the same, for a `[*]` path). */
  was?: unknown;
  /** Where the replaced value came from: `scenario` (the file), a variant, or an earlier flag. */
  wasFrom?: string;
}

/**
 * Something a reader of the figures must know to read them right, as one line (`message`) and
 * as fields: roots the drain cut off, a run with no roots, a stopped run, expectations skipped.
 */
export type ResultNote =
  | {
      kind: 'unfinished';
      variant: string;
      /** Root tasks offered but not finished when the run ended. */
      roots: number;
      /** Of the roots offered. */
      share: number;
      /** How long the run waited for work in flight after arrivals stopped; null when the run was stopped instead. */
      drainMs: number | null;
      message: string;
    }
  | { kind: 'no-roots'; variant: string; message: string }
  | { kind: 'partial'; stoppedAtMs: number; durationMs: number; message: string }
  | {
      kind: 'skipped-expectations';
      /** The variants they are for (`not-run`); every variant run, for a stopped run. */
      variants: string[];
      count: number;
      /** `not-run`: for a variant this run did not make; `partial`: the run was stopped. */
      reason: 'not-run' | 'partial';
      message: string;
    }
  /** With a gateway under test: hop 2 read before the upstream settled (`UpstreamHop.settle`). */
  | { kind: 'hop-unsettled'; variant: string; outcome: HopSettle['outcome']; inFlight: number; message: string }
  /** Requests that reached the upstream without the harness's length header (a gateway that drops it). */
  | { kind: 'length-header'; variant: string; requests: number; of: number; lengthsAsAsked: boolean; message: string }
  /** Attempts of the driver given up on before their request left (waiting for a connection): the gateway never saw them. */
  | { kind: 'hop-unsent'; variant: string; attempts: number; sent: number; message: string }
  /** A fleet run's share whose worker was lost: its counters are not in the figures; its intended roots are named. */
  | {
      kind: 'lost-share';
      variant: string;
      share: number;
      of: number;
      worker: string | null;
      plannedRoots: number | null;
      users?: number[];
      message: string;
    }
  /** A fleet worker that started driving later than the agreed instant. */
  | { kind: 'late-worker'; variant: string; share: number; worker: string | null; startLagMs: number; message: string }
  /** A fleet worker whose engines lost the shared state's Redis for a while (they decided alone meanwhile). */
  | { kind: 'shared-state-lost'; variant: string; share: number; worker: string | null; times: number; message: string }
  /** 200s the upstream gave the gateway beyond those the gateway gave the driver. */
  | { kind: 'successes-lost'; variant: string; upstream: number; driver: number; message: string };

/** How the live driver's connection pool held up (requests waiting for a connection, sampled every 100 ms). */
export interface LiveFigures {
  /** Connections of the pool (the scenario's `live.connections`, or `--connections`). */
  poolConnections: number;
  /** The most requests seen waiting for a connection at once. */
  maxPending: number;
  /** Requests waiting for a connection, on average over the run. */
  meanPending: number;
  /** Requests that got no HTTP answer (connection refused or reset, socket errors). */
  requestErrors: number;
  /** With a gateway under test (`--target` with `--upstream`): hop 2, behind the gateway, and the total. */
  upstream?: UpstreamHop;
  /**
   * A run driven by a fleet (`--queue … --workers N`): who drove which share, each worker's
   * clock and start. The figures above are then the fleet's: pools and errors summed, the most
   * pending of any worker.
   */
  workers?: LiveWorker[];
  /** A fleet's engine state: what was one across the workers (in Redis) and what stayed each worker's. */
  sharedState?: SharedState;
}

/** One share of a fleet run and the worker that drove it (or was to). */
export interface LiveWorker {
  share: number;
  of: number;
  /** `host:pid:thread` of the worker that drove it; null when none was heard from. */
  worker: string | null;
  /** `reported`: its last counters came back and are in the figures; `lost`: they never did, and are not. */
  status: 'reported' | 'lost';
  /** The root tasks the share was to start (open-loop arrivals); null for closed-loop users. */
  plannedRoots: number | null;
  /** Closed loop: the users that were this share's. */
  users?: number[];
  /** Root tasks it started (its `roots.offered`); for a lost share, as of its last report. */
  roots: number;
  /** Requests it wrote to the target. */
  sent: number;
  /** Redis's clock minus the worker's, ms (the fleet's timeline is Redis's `TIME`). */
  offsetMs: number;
  /** How long after the agreed instant it started, ms: a late worker's roots due meanwhile left late and count from when they were due. */
  startLagMs: number;
  /** Stopped before its share's end. */
  interrupted: boolean;
  /**
   * With engine state shared in Redis: how often its engines' link to Redis broke during the
   * run (each time, they decided on local state alone until it was back). Absent when never.
   */
  storeUnavailable?: number;
}

export interface SharedState {
  /** Where the shared state lives: `redis` (`RedisStore`, one set of keys per run and variant), or `none` (no engine layer). */
  store: 'redis' | 'none';
  /** What every worker's engines read and wrote as one: `retryBudget`, `throttle`, `breakerCounts`, `limits`. */
  shared: string[];
  /** What stayed each worker's: `breakerState` (open, half-open), `concurrency`. */
  perWorker: string[];
}

/**
 * With a gateway under test (`--target` with `--upstream`): hop 2, gateway → upstream, as the
 * upstream counted it once it settled, and the total amplification. Hop 1, driver → gateway, is
 * the variant's own `amplification` and `upstream` block (what the gateway answered the driver).
 */
export interface UpstreamHop {
  /**
   * Requests the driver wrote to the gateway: hop 1's attempts, less any given up on before
   * they left (waiting for a connection; `live.maxPending` shows it), which the gateway never
   * saw. When every attempt left, `totalAmplification` is exactly hop 1 × hop 2.
   */
  sent: number;
  /** Model requests the upstream received over the run (its own route counters, read after it settled). */
  reached: number;
  /** reached ÷ sent: hop 2's amplification, the gateway's own per request it got (1 when it neither retries nor hedges). */
  amplification: number;
  /** reached ÷ the run's logical leaf calls: hop 1 × hop 2, what the upstream took per call the tree meant. */
  totalAmplification: number;
  /**
   * Hop 2's answers as the upstream sent them, every route: HTTP statuses as written (`"503"`
   * for an overload on the OpenAI routes), `"reset"`, `"cancelled"` (the gateway left before
   * an answer), `"inFlight"` when it had not settled. Adds up to `reached`.
   */
  status: Record<string, number>;
  /** The same per route the gateway called. */
  routes: HopRoute[];
  /** Tokens the upstream served over the run (prompt + completion), every model. */
  tokensServed: number;
  /** Tokens the upstream spent on requests the gateway had given up on. */
  wastedTokens: number;
  /** Requests that reached the upstream without `x-stormlab-output-tokens`: a gateway that does not pass it on. */
  noLengthHeader: number;
  /**
   * Whether those were answered as the header asks anyway (`stormlab serve` is told through
   * its control API, `/_stormlab/output-tokens`); false when the upstream could not be told:
   * their lengths, and every token figure, are then the upstream's own, as measured.
   */
  lengthsAsAsked: boolean;
  settle: HopSettle;
}

export interface HopRoute {
  route: string;
  requests: number;
  status: Record<string, number>;
}

/**
 * How hop 2 was read: after the driver stopped, the upstream's counters are read again until
 * nothing is in flight there and no request has come for `quietMs` (longer than a gateway's
 * backoff, so its retries of calls the driver gave up on are counted), or `timeoutMs` ran out.
 */
export interface HopSettle {
  settled: boolean;
  /**
   * `quiet`: settled; `timeout`: still busy when `timeoutMs` ran out; `skipped`: the run was
   * stopped for good (a second q or Ctrl-C, SIGTERM, a closed output pipe); `unreadable`: the
   * counters could not be read (the figures are the last good reading).
   */
  outcome: 'quiet' | 'timeout' | 'skipped' | 'unreadable';
  quietMs: number;
  timeoutMs: number;
  /** From the driver's end to the reading the figures come from, ms. */
  waitedMs: number;
  /** Requests in flight at the upstream at that reading (0 when settled). */
  inFlight: number;
  /** Requests that reached the upstream after the driver stopped: the gateway still retrying. */
  afterEnd: number;
}

/** Wall-clock figures: the only part of a result file that may differ between identical runs. */
export interface RunTiming {
  wallMs: number;
  /** Upstream attempts (every variant) per wall-clock second. */
  attemptsPerSec: number;
  /** Simulator events processed, when the driver counts them. */
  events?: number;
  eventsPerSec?: number;
  /** Per variant, in the order of `variants`. */
  variants?: Array<{ name: string; wallMs: number; attemptsPerSec: number }>;
}

/**
 * One pass/fail line of a gate: an expectation judged on one variant's result, or one metric of
 * `stormlab diff`. Every gate output (the terminal table, JUnit, Markdown, JSON) is made from a
 * list of these.
 */
export interface Check {
  /** What was checked, as the user wrote it or as diff names it: `amplification < 1.5`. */
  name: string;
  /** The run it is about: a variant's name. */
  group: string;
  status: 'pass' | 'fail' | 'skip';
  /** The figure measured, formatted for people (`1.07×`, `12.3 s`, `never`); '' when none was. */
  actual: string;
  /** What it had to be, formatted: `< 1.5`. */
  expected: string;
  /** Why it failed or was skipped, one line; absent when it passed. */
  message?: string;
}

export interface ResultFile {
  schema: typeof RESULT_SCHEMA;
  scenario: string;
  seed: number;
  mode: 'sim' | 'live';
  /** True when the run was stopped before its end (q, Ctrl-C, SIGTERM): the figures cover only what ran. */
  partial?: true;
  variants: RunResult[];
  /** The expectations judged on this result (the scenario's `expect:` and `--expect`), when there were any. */
  checks?: Check[];
  /** What the figures need said beside them (see `ResultNote`); absent when there is nothing to say. */
  notes?: ResultNote[];
  timing: RunTiming;
}

/** What a live dashboard renders, every ~100 ms. */
export interface RunSnapshot {
  /** Time of the snapshot, ms since the run started. */
  t: number;
  durationMs: number;
  /** t ÷ durationMs, capped at 1. */
  progress: number;
  amplification: number;
  /** Upstream attempts ÷ logical leaf calls over the last 5 seconds (this one included). */
  amplificationLast5s: number;
  /** As in `RunResult`, so far. */
  truncatedSuccesses?: number;
  /** As in `RunResult`, so far. */
  resumedStreams?: number;
  /** Roots ok within deadline per second so far. */
  goodput: number;
  successRate: number;
  /** `unfinished` counts the roots in flight. */
  roots: RootResult;
  layers: LayerResult[];
  upstream: UpstreamResult;
  /** The last 60 seconds. */
  series: SeriesResult;
  tools?: ToolResult[];
  users?: UsersResult;
  /** As in `RunResult`, so far (goodput per second of the run so far). */
  tenants?: TenantResult[];
  inference?: InferenceResult;
}
