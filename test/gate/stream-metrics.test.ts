import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateExpectations } from '../../src/gate/evaluate-expectations.js';
import { parseExpectation } from '../../src/gate/expectation.js';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import type { ResultFile, RunResult } from '../../src/run/metrics/result.js';
import { fakeRun } from '../report/fixture.js';

// The stream figures as gate metrics: truncated successes (run and layer) and TTFT per layer.

describe('stream metrics in the catalog', () => {
  const catalog = new MetricCatalog(['agent', 'llm'], ['primary']);
  let plain: RunResult;
  let streamed: RunResult;
  beforeAll(async () => {
    plain = fakeRun('naive', { roots: 10, leafAttempts: 1, okShare: 1 });
    streamed = {
      ...plain,
      truncatedSuccesses: 7,
      layers: plain.layers.map((l) =>
        l.name === 'llm'
          ? { ...l, truncatedSuccesses: 7, ttftMs: { p50: 400, p95: 2_500, p99: 12_000 } }
          : { ...l, truncatedSuccesses: 3 },
      ),
    };
  });

  it('reads them from a streamed run, under their names and short forms', () => {
    const value = (name: string) => catalog.resolve(name).value(streamed);
    expect(value('truncatedSuccesses')).toBe(7);
    expect(value('truncated')).toBe(7);
    expect(value('layers.agent.truncatedSuccesses')).toBe(3);
    expect(value('layers.llm.ttftMs.p99')).toBe(12_000);
    expect(value('layers.llm.ttft.p95')).toBe(2_500);
    expect(catalog.resolve('layers.llm.ttft.p50').unit).toBe('ms');
  });

  it('a run without a streamed layer has no truncated success, and no TTFT (a skipped check)', () => {
    expect(catalog.resolve('truncatedSuccesses').value(plain)).toBe(0);
    expect(catalog.resolve('layers.llm.ttft.p95').value(plain)).toBeNull();
  });

  it('judges `truncatedSuccesses == 0` and `layers.llm.ttft.p95 < 2s` like any gate', () => {
    const file = { variants: [streamed, { ...plain, name: 'engine' }] } as unknown as ResultFile;
    const parse = (text: string) => parseExpectation(text, catalog, ['naive', 'engine']);
    const checks = evaluateExpectations([parse('truncatedSuccesses == 0'), parse('layers.llm.ttft.p95 < 2s')], file);
    expect(checks.map((c) => [c.name, c.group, c.status])).toEqual([
      ['truncatedSuccesses == 0', 'naive', 'fail'],
      ['truncatedSuccesses == 0', 'engine', 'pass'],
      ['layers.llm.ttft.p95 < 2s', 'naive', 'fail'],
      ['layers.llm.ttft.p95 < 2s', 'engine', 'skip'],
    ]);
  });
});
