import { MetricsCollector } from '../../src/run/metrics/collector.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult } from '../../src/run/metrics/result.js';

const LAYERS = ['orchestrator', 'agent', 'llm'];

/** A hand-fed run: `roots` roots, each leaf call making `leafAttempts` upstream attempts, `okShare` of roots ok. */
export function fakeRun(
  name: string,
  o: { roots: number; leafAttempts: number; okShare: number; shed?: boolean },
): RunResult {
  const c = new MetricsCollector({ layers: LAYERS, models: ['primary'], durationMs: 20_000 });
  for (let i = 0; i < o.roots; i++) {
    const t = (i * 20_000) / o.roots;
    const ok = i < o.roots * o.okShare;
    c.rootOffered(t);
    c.faultActive(t, t >= 5000 && t < 10_000);
    for (let layer = 0; layer < 3; layer++) {
      c.logicalCall(layer, 1, t);
      c.attempt(layer, t, false);
      c.callDone(layer, t, t + 100 * (3 - layer) + (i % 50), ok);
    }
    for (let a = 0; a < o.leafAttempts; a++) {
      c.upstreamAttempt(0, t);
      const last = a === o.leafAttempts - 1;
      c.upstreamResponse(0, last && ok ? 200 : a % 2 ? 529 : 429, 1, last && ok ? 500 : 0, t + 50);
    }
    if (!ok) c.wasted(120, t);
    if (o.shed && i % 10 === 0) c.shed(2, i % 20 ? 'throttle' : 'budget', t);
    c.rootDone(t, t + 300 + (i % 50), ok, true);
  }
  return c.result({ name });
}

export function fakeFile(variants: RunResult[]): ResultFile {
  return {
    schema: RESULT_SCHEMA,
    scenario: 'retry-storm',
    seed: 42,
    mode: 'sim',
    variants,
    timing: { wallMs: 412.5, attemptsPerSec: 1_234_567 },
  };
}
