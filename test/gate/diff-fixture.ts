import { RESULT_SCHEMA, type LayerResult, type ResultFile, type RunResult } from '../../src/run/metrics/result.js';

/** The figures `stormlab diff` compares, for one hand-made variant; everything else is filler. */
export interface Figures {
  amplification?: number;
  goodput?: number;
  successRate?: number;
  p99?: number;
  /** p99 by layer name; the layers of the run, in order. @default orchestrator, agent, llm at 300, 200, 100 ms */
  layers?: Record<string, number>;
  wastedTokens?: number;
  recoveryMs?: number | null;
}

/** The figure given (null too: a test of nulls passes one), else the default. */
function given(x: number | undefined, fallback: number): number {
  return x === undefined ? fallback : x;
}

function layer(name: string, p99: number): LayerResult {
  return {
    name,
    logicalCalls: 100,
    attempts: 110,
    retries: 10,
    amplification: 1.1,
    ok: 95,
    failed: 5,
    successRate: 0.95,
    latencyMs: { p50: p99 / 2, p95: p99, p99 },
    wastedTokens: 0,
    shed: {},
  };
}

/** A complete `RunResult` with these figures (defaults: a healthy engine run). */
export function variant(name: string, f: Figures = {}): RunResult {
  const figures = {
    attempts: 110,
    status: { '200': 100 },
    rateLimited: { requests: 0, tokens: 0, quota: 0 },
    share: { '429': 0, '5xx': 0, timeout: 0 },
    wastedTokens: given(f.wastedTokens, 0),
    tokensServed: 50_000,
  };
  return {
    name,
    durationMs: 20_000,
    amplification: given(f.amplification, 1.1),
    goodput: given(f.goodput, 10),
    successRate: given(f.successRate, 0.95),
    roots: {
      offered: 200,
      ok: 190,
      late: 0,
      failed: 10,
      unfinished: 0,
      latencyMs: { p50: 200, p95: 600, p99: given(f.p99, 800), max: 900 },
    },
    layers: Object.entries(f.layers ?? { orchestrator: 300, agent: 200, llm: 100 }).map(([n, p]) => layer(n, p)),
    upstream: { ...figures, models: [{ name: 'primary', ...figures }] },
    recoveryMs: f.recoveryMs === undefined ? 2000 : f.recoveryMs,
    series: {
      binMs: 1000,
      fromBin: 0,
      offered: [],
      ok: [],
      shed: [],
      upstreamAttempts: [],
      leafCalls: [],
      status429: [],
      status5xx: [],
      timeouts: [],
      faultActive: [],
      engine: [],
    },
  };
}

export function file(variants: RunResult[], o: { scenario?: string; seed?: number } = {}): ResultFile {
  return {
    schema: RESULT_SCHEMA,
    scenario: o.scenario ?? 'retry-storm',
    seed: o.seed ?? 1,
    mode: 'sim',
    variants,
    timing: { wallMs: 10, attemptsPerSec: 1000 },
  };
}
