import { describe, expect, it } from 'vitest';
import type { ShedReason } from '../../../src/engine/errors.js';
import { MetricsCollector } from '../../../src/run/metrics/collector.js';

const REASONS: ShedReason[] = ['throttle', 'budget', 'breaker'];

/** Collects garbage (the slow project runs with --expose-gc) so readings are of live memory only. */
function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc (the vitest project "slow" does)');
  gc();
  return process.memoryUsage().heapUsed;
}

/** 10 calls per step, the mix a simulator makes: roots, calls, attempts, upstream answers, sheds. */
function feed(c: MetricsCollector, steps: number): void {
  for (let i = 0; i < steps; i++) {
    const t = i * 0.5; // two steps per virtual ms: a million steps span 500 s of run
    const layer = i % 3;
    c.rootOffered(t);
    c.logicalCall(layer, 1, t);
    c.attempt(layer, t, (i & 1) === 1);
    c.upstreamAttempt(i & 1, t);
    c.upstreamResponse(i & 1, (i & 7) === 0 ? 429 : 200, 1 + (i % 3), 100, t + 3);
    c.callDone(layer, t, t + (i % 5000), (i & 3) !== 0);
    c.shed(layer, REASONS[layer], t);
    c.wasted(10, t);
    c.rootDone(t, t + (i % 20_000), (i & 3) !== 0, true);
    if ((i & 1023) === 0) c.faultActive(t, false);
  }
}

describe('MetricsCollector memory', () => {
  it('stays flat: 10 million calls grow the heap by less than 20 MB', async () => {
    const c = new MetricsCollector({
      layers: ['orchestrator', 'agent', 'llm'],
      models: ['a', 'b'],
      durationMs: 600_000,
    });
    feed(c, 10_000); // warm up: JIT, first bins
    const before = heapUsed();
    feed(c, 1_000_000); // 10 million collector calls
    const grown = heapUsed() - before;
    expect(grown).toBeLessThan(20 * 1024 * 1024);
    const r = c.result({ name: 'x' });
    expect(r.roots.offered).toBe(1_010_000);
    expect(r.upstream.attempts).toBe(1_010_000);
  });
});
