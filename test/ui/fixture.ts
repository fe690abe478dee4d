import type { GuardSnapshot } from '../../src/engine/guard-core.js';
import type { LayerResult, RunSnapshot, SeriesResult, UpstreamResult } from '../../src/run/metrics/result.js';
import type { DashboardModel, RunView } from '../../src/run/run-view.js';
import type { FaultPhase } from '../../src/upstream/config.js';
import type { ModelStats } from '../../src/upstream/upstream-model.js';

/**
 * Hand-built dashboard frames: retry-storm-like traffic (20 root tasks/s, 3 leaf calls each)
 * at t = 32.4 s of a 60 s run, a latency phase behind us and a 503 outage under way.
 */
export const T = 32_400;
export const DURATION = 60_000;

export const FAULTS: FaultPhase[] = [
  { kind: 'latency', fromMs: 5_000, toMs: 15_000, rate: 1, factor: 4 },
  { kind: 'outage', fromMs: 20_000, toMs: 50_000, rate: 1, status: 503 },
];

/** Bins 0 .. 32 (bin 32 is the second in progress); `during` applies from 20 s, the outage. */
function perSecond(before: number, during: number, partial = 0.4): number[] {
  return Array.from({ length: 33 }, (_, i) => (i < 20 ? before : during) * (i === 32 ? partial : 1));
}

function series(o: {
  attemptsBefore: number;
  attemptsDuring: number;
  okDuring: number;
  shedDuring: number;
  engine: SeriesResult['engine'];
}): SeriesResult {
  const attempts = perSecond(o.attemptsBefore, o.attemptsDuring);
  return {
    binMs: 1000,
    fromBin: 0,
    offered: perSecond(20, 20),
    ok: perSecond(20, o.okDuring),
    shed: perSecond(0, o.shedDuring),
    upstreamAttempts: attempts,
    leafCalls: perSecond(60, 60),
    status429: perSecond(0, 0),
    status5xx: attempts.map((a, i) => (i < 20 ? 0 : a)),
    timeouts: perSecond(0, 0),
    faultActive: Array.from({ length: 33 }, (_, i) => ((i >= 5 && i < 15) || i >= 20 ? 1 : 0)),
    engine: o.engine,
  };
}

function layer(
  name: string,
  logicalCalls: number,
  attempts: number,
  ok: number,
  failed: number,
  p: [number, number, number],
  shed: LayerResult['shed'] = {},
): LayerResult {
  return {
    name,
    logicalCalls,
    attempts,
    retries: attempts - logicalCalls,
    amplification: attempts / logicalCalls,
    ok,
    failed,
    wastedTokens: 0,
    successRate: ok / (ok + failed),
    latencyMs: { p50: p[0], p95: p[1], p99: p[2] },
    shed,
  };
}

function model(
  name: string,
  busy: number,
  queued: number,
  attempts: number,
  ok: number,
  s503: number,
  wastedTokens: number,
): ModelStats {
  const byStatus: Record<string, number> = { '200': ok };
  if (s503 > 0) byStatus['503'] = s503;
  return { name, busy, queued, attempts, byStatus, byDetail: {}, tokensServed: ok * 1_000, wastedTokens, cancelled: 0 };
}

function upstream(attempts: number, ok: number, wastedTokens: number): UpstreamResult {
  const s503 = attempts - ok;
  const figures = {
    attempts,
    status: { '200': ok, '503': s503 },
    rateLimited: { requests: 0, tokens: 0, quota: 0 },
    share: { '429': 0, '5xx': s503 / attempts, timeout: 0 },
    wastedTokens,
    tokensServed: ok * 1_000,
  };
  return { ...figures, models: [{ name: 'primary', ...figures }] };
}

function snapshot(o: Omit<RunSnapshot, 't' | 'durationMs' | 'progress'>): RunSnapshot {
  return { t: T, durationMs: DURATION, progress: T / DURATION, ...o };
}

export function naiveView(): RunView {
  const up = upstream(27_604, 1_208, 1_234_000);
  return {
    name: 'naive',
    snapshot: snapshot({
      amplification: 14.2,
      amplificationLast5s: 27.0,
      goodput: 12.3,
      successRate: 400 / 648,
      roots: {
        offered: 648,
        ok: 400,
        late: 0,
        failed: 180,
        unfinished: 68,
        latencyMs: { p50: 640, p95: 4_100, p99: 5_200, max: 5_900 },
      },
      layers: [
        layer('orchestrator', 648, 1_012, 400, 180, [640, 4_100, 5_200]),
        layer('agent', 1_944, 5_390, 1_200, 540, [420, 1_800, 2_300]),
        layer('llm', 1_944, 27_604, 1_208, 532, [310, 1_100, 1_900]),
      ],
      upstream: up,
      series: series({ attemptsBefore: 64, attemptsDuring: 1_620, okDuring: 0, shedDuring: 0, engine: [] }),
    }),
    engines: [],
    upstream: { models: [model('primary', 64, 128, 27_604, 1_208, 26_396, 1_234_000)] },
    done: false,
  };
}

function guard(at: number, o: Partial<GuardSnapshot>): GuardSnapshot {
  return { at, targets: [], limits: [], ...o };
}

const closed = (key: string) => ({
  key,
  state: 'closed' as const,
  since: 0,
  trips: 0,
  openUntil: 0,
  calls: 120,
  failures: 2,
  slow: 0,
  throttled: 0,
  probesInFlight: 0,
});

export function engineView(): RunView {
  const up = upstream(2_100, 1_260, 18_400);
  return {
    name: 'engine',
    snapshot: snapshot({
      amplification: 1.08,
      amplificationLast5s: 0.42,
      goodput: 12.9,
      successRate: 418 / 648,
      roots: {
        offered: 648,
        ok: 418,
        late: 0,
        failed: 190,
        unfinished: 40,
        latencyMs: { p50: 610, p95: 1_300, p99: 2_100, max: 2_600 },
      },
      layers: [
        layer('orchestrator', 648, 652, 418, 190, [610, 1_300, 2_100], { deadline: 4 }),
        layer('agent', 1_944, 1_990, 1_254, 570, [400, 900, 1_500], { budget: 31 }),
        layer('llm', 1_944, 2_100, 1_260, 560, [300, 800, 1_400], { throttle: 512, breaker: 388, budget: 12 }),
      ],
      upstream: up,
      series: series({
        attemptsBefore: 62,
        attemptsDuring: 24,
        okDuring: 0,
        shedDuring: 48,
        engine: [
          {
            layer: 'llm',
            dropProbability: perSecond(0, 0.62, 1),
            budgetBalance: perSecond(6, 0.4, 1),
            breakerOpen: perSecond(0, 1, 1),
          },
        ],
      }),
    }),
    engines: [
      {
        layer: 'orchestrator',
        guard: guard(T, {
          budget: { firsts: 1_296, retries: 4, balance: 135.6 },
          targets: [
            {
              name: 'default',
              throttle: { requests: 1_300, accepts: 840, dropProbability: 0 },
              breaker: closed('orchestrator:default'),
            },
          ],
        }),
      },
      {
        layer: 'agent',
        guard: guard(T, {
          budget: { firsts: 3_888, retries: 31, balance: 0.4 },
          targets: [
            {
              name: 'default',
              throttle: { requests: 3_900, accepts: 1_800, dropProbability: 0.08 },
              breaker: closed('agent:default'),
            },
          ],
        }),
      },
      {
        layer: 'llm',
        guard: guard(T, {
          budget: { firsts: 3_888, retries: 400, balance: -0.2 },
          targets: [
            {
              name: 'primary',
              throttle: { requests: 3_100, accepts: 600, dropProbability: 0.62 },
              breaker: {
                key: 'llm:primary',
                state: 'open',
                since: 29_200,
                trips: 2,
                openUntil: 39_200,
                calls: 0,
                failures: 0,
                slow: 0,
                throttled: 0,
                probesInFlight: 0,
              },
            },
            {
              name: 'fallback',
              throttle: { requests: 900, accepts: 880, dropProbability: 0 },
              breaker: closed('llm:fallback'),
            },
          ],
          limits: [
            { dimension: 'requests/s', key: undefined, available: 14, capacity: 50, debt: 0 },
            { dimension: 'tokens/min', key: 'primary', available: 6_100, capacity: 90_000, debt: 0 },
          ],
          concurrency: { inFlight: 12, queued: 3 },
        }),
      },
    ],
    upstream: { models: [model('primary', 9, 0, 1_700, 860, 840, 18_400), model('fallback', 3, 0, 400, 400, 0, 0)] },
    done: false,
  };
}

export function frame(variants: RunView[], o: Partial<DashboardModel> = {}): DashboardModel {
  return {
    scenario: 'retry-storm',
    mode: 'sim',
    seed: 1,
    t: T,
    durationMs: DURATION,
    speed: 10,
    paused: false,
    faults: FAULTS,
    variants,
    ...o,
  };
}

/** One variant: a plain `stormlab run` with the engine. */
export const oneVariant = (o?: Partial<DashboardModel>): DashboardModel => frame([engineView()], o);

/** Two variants side by side: `stormlab compare` naive vs engine. */
export const twoVariants = (o?: Partial<DashboardModel>): DashboardModel => frame([naiveView(), engineView()], o);

/** Every ANSI escape sequence removed. */
export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '');
}

/** The frame's lines, escapes removed. */
export function linesOf(frame: string | undefined): string[] {
  return stripAnsi(frame ?? '').split('\n');
}
