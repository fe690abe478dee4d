import type { RunResult } from '../run/metrics/result.js';
import type { Observed } from './derive.js';

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
export function fitReport(
  obs: Observed,
  sim: RunResult,
  runs: number,
  arrivals: FitReport['roots']['arrivals'],
): FitReport {
  const rows: FitRow[] = [];
  const row = (layer: string, metric: string, o: number, s: number) =>
    rows.push({
      layer,
      metric,
      observed: r4(o),
      simulated: r4(s),
      relativeError: rel(r4(o), r4(s)) === null ? null : r4(rel(r4(o), r4(s))!),
    });
  const simRoots = Math.max(1, sim.roots.offered);
  for (let i = 0; i < obs.layers.length; i++) {
    const o = obs.layers[i];
    const s = sim.layers[i];
    row(o.name, 'calls per root', o.callsPerRoot, s.logicalCalls / simRoots);
    row(o.name, 'attempts per call', o.attemptsPerCall, s.logicalCalls === 0 ? 0 : s.attempts / s.logicalCalls);
    row(o.name, 'latency p50 ms', o.latencyMs.p50, s.latencyMs.p50);
    row(o.name, 'latency p95 ms', o.latencyMs.p95, s.latencyMs.p95);
    row(o.name, 'latency p99 ms', o.latencyMs.p99, s.latencyMs.p99);
  }
  row(
    'upstream',
    'tokens per root',
    (obs.tokens.prompt + obs.tokens.completion) / Math.max(1, obs.roots),
    sim.upstream.tokensServed / simRoots,
  );
  row('upstream', 'share 429', obs.errors['429'], sim.upstream.share['429']);
  row('upstream', 'share 5xx', obs.errors['5xx'], sim.upstream.share['5xx']);
  row('upstream', 'share no status', obs.errors.timeout, sim.upstream.share.timeout);
  const ok = sim.upstream.status['200'] ?? 0;
  row('upstream', 'share failed', obs.errors.failed, sim.upstream.attempts === 0 ? 0 : 1 - ok / sim.upstream.attempts);
  return {
    schema: 'stormlab.calibrate/v1',
    roots: { observed: obs.roots, simulated: sim.roots.offered, runs, arrivals },
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
