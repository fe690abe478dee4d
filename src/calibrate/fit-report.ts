import type { RunResult } from '../run/metrics/result.js';
import type { Observed } from './derive.js';

/** What the fit compares: the simulated runs of the written scenario, pooled. */
export interface SimFigures {
  /** Runs pooled (seeds 1…runs). */
  runs: number;
  /** Root tasks offered, over every run. */
  roots: number;
  layers: Array<{ name: string; logicalCalls: number; attempts: number; latencyMs: Percentiles }>;
  upstream: { attempts: number; ok: number; '429': number; '5xx': number; timeout: number; tokensServed: number };
}

interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/**
 * Several runs as one: counts summed; a layer's latency percentiles the mean of each run's,
 * weighted by its calls (each run's are read off its own histogram).
 */
export function pooled(results: readonly RunResult[]): SimFigures {
  const first = results[0];
  const layers = first.layers.map((l, i) => {
    let calls = 0;
    let attempts = 0;
    const sum = { p50: 0, p95: 0, p99: 0 };
    for (const r of results) {
      const x = r.layers[i];
      calls += x.logicalCalls;
      attempts += x.attempts;
      for (const k of ['p50', 'p95', 'p99'] as const) sum[k] += x.latencyMs[k] * x.logicalCalls;
    }
    const mean = (k: keyof Percentiles) => (calls === 0 ? 0 : sum[k] / calls);
    return {
      name: l.name,
      logicalCalls: calls,
      attempts,
      latencyMs: { p50: mean('p50'), p95: mean('p95'), p99: mean('p99') },
    };
  });
  const upstream = { attempts: 0, ok: 0, '429': 0, '5xx': 0, timeout: 0, tokensServed: 0 };
  let roots = 0;
  for (const r of results) {
    roots += r.roots.offered;
    const u = r.upstream;
    upstream.attempts += u.attempts;
    upstream.ok += u.status['200'] ?? 0;
    upstream['429'] += u.share['429'] * u.attempts;
    upstream['5xx'] += u.share['5xx'] * u.attempts;
    upstream.timeout += u.share.timeout * u.attempts;
    upstream.tokensServed += u.tokensServed;
  }
  return { runs: results.length, roots, layers, upstream };
}

export interface FitRow {
  layer: string;
  metric: string;
  observed: number;
  simulated: number;
  /** (simulated − observed) ÷ observed; null when nothing was observed and something was simulated. */
  relativeError: number | null;
}

export interface FitReport {
  schema: 'stormlab.calibrate/v1';
  /** Simulated: root tasks over every run pooled (`runs`), per run `simulated ÷ runs`. */
  roots: { observed: number; simulated: number; runs: number; arrivals: 'replayed' | 'as fitted' };
  rows: FitRow[];
}

function rel(observed: number, simulated: number): number | null {
  if (observed === 0) return simulated === 0 ? 0 : null;
  return (simulated - observed) / observed;
}

function r4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/**
 * Observed against simulated, layer by layer: calls per root, attempts per logical call,
 * latency p50/p95/p99; then tokens per root and the upstream's error shares. `arrivals` says
 * whether the runs replayed the traced root start times (open loop) or drew their own (closed
 * loop: users start tasks as theirs end).
 */
export function fitReport(obs: Observed, sim: SimFigures, arrivals: FitReport['roots']['arrivals']): FitReport {
  const rows: FitRow[] = [];
  const row = (layer: string, metric: string, o: number, s: number) =>
    rows.push({
      layer,
      metric,
      observed: r4(o),
      simulated: r4(s),
      relativeError: rel(r4(o), r4(s)) === null ? null : r4(rel(r4(o), r4(s))!),
    });
  const simRoots = Math.max(1, sim.roots);
  for (let i = 0; i < obs.layers.length; i++) {
    const o = obs.layers[i];
    const s = sim.layers[i];
    row(o.name, 'calls per root', o.callsPerRoot, s.logicalCalls / simRoots);
    row(o.name, 'attempts per call', o.attemptsPerCall, s.logicalCalls === 0 ? 0 : s.attempts / s.logicalCalls);
    row(o.name, 'latency p50 ms', o.latencyMs.p50, s.latencyMs.p50);
    row(o.name, 'latency p95 ms', o.latencyMs.p95, s.latencyMs.p95);
    row(o.name, 'latency p99 ms', o.latencyMs.p99, s.latencyMs.p99);
  }
  const u = sim.upstream;
  const share = (x: number) => (u.attempts === 0 ? 0 : x / u.attempts);
  row(
    'upstream',
    'tokens per root',
    (obs.tokens.prompt + obs.tokens.completion) / Math.max(1, obs.roots),
    u.tokensServed / simRoots,
  );
  row('upstream', 'share 429', obs.errors['429'], share(u['429']));
  row('upstream', 'share 5xx', obs.errors['5xx'], share(u['5xx']));
  row('upstream', 'share no status', obs.errors.timeout, share(u.timeout));
  row('upstream', 'share failed', obs.errors.failed, u.attempts === 0 ? 0 : 1 - u.ok / u.attempts);
  return {
    schema: 'stormlab.calibrate/v1',
    roots: { observed: obs.roots, simulated: sim.roots, runs: sim.runs, arrivals },
    rows,
  };
}

function fmt(x: number): string {
  if (Math.abs(x) >= 100) return String(Math.round(x));
  if (Math.abs(x) >= 1) return x.toFixed(2);
  return x.toFixed(4);
}

/** The report as a table, one row per figure. */
export function fitTable(r: FitReport): string {
  const head = ['layer', 'figure', 'observed', 'simulated', 'rel. error'];
  const body = r.rows.map((x) => [
    x.layer,
    x.metric,
    fmt(x.observed),
    fmt(x.simulated),
    x.relativeError === null ? '—' : `${x.relativeError >= 0 ? '+' : ''}${(x.relativeError * 100).toFixed(1)} %`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    `fit: observed ${r.roots.observed} root tasks; simulated ${r.roots.simulated} in ${r.roots.runs === 1 ? '1 run (seed 1)' : `${r.roots.runs} runs (seeds 1–${r.roots.runs})`}, ${r.roots.arrivals === 'replayed' ? 'each replaying the traced arrivals' : 'closed-loop users as fitted'}`,
    line(head),
    ...body.map(line),
  ].join('\n');
}
