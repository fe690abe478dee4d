import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { defaultVariants } from '../../src/scenario/schema.js';
import { BASE, problemsOf } from './helpers.js';

describe('variants', () => {
  it('defaults to naive and engine when the file names none', () => {
    const s = loadScenario(BASE);
    expect(s.variants).toEqual(defaultVariants());
    expect(s.variants.map((v) => v.name)).toEqual(['naive', 'engine']);
    expect(loadScenario(BASE, { variant: 'naive' }).traffic.layers.map((l) => l.retry)).toEqual([
      { policy: 'naive', attempts: 3, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
      { policy: 'naive', attempts: 3, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
    ]);
    expect(loadScenario(BASE, { variant: 'engine' }).traffic.layers.map((l) => l.retry)).toEqual([
      { policy: 'engine', engine: {} },
      { policy: 'engine', engine: {} },
    ]);
  });

  it('takes explicit variants, as path: value mappings or path=value lists', () => {
    const text = `${BASE}variants:\n  slow:\n    arrival.rate: 1\n    layers[0].timeout: 2s\n  fast: [ 'arrival.rate=50', 'seed=9' ]\n  same: {}\n`;
    const s = loadScenario(text);
    expect(s.variants).toEqual([
      {
        name: 'slow',
        set: [
          { path: 'arrival.rate', value: 1 },
          { path: 'layers[0].timeout', value: '2s' },
        ],
      },
      {
        name: 'fast',
        set: [
          { path: 'arrival.rate', value: 50 },
          { path: 'seed', value: 9 },
        ],
      },
      { name: 'same', set: [] },
    ]);
    const slow = loadScenario(text, { variant: 'slow' });
    expect(slow).toMatchObject({
      traffic: { arrival: { rate: 1 }, layers: [{ timeoutMs: 2_000 }, {}] },
      source: '<inline> (variant slow)',
    });
    expect(loadScenario(text, { variant: 'fast' })).toMatchObject({ seed: 9, traffic: { arrival: { rate: 50 } } });
    expect(loadScenario(text, { variant: 'same' }).traffic).toEqual(s.traffic);
  });

  it('lies under --set: the file, then the variant, then the command line, which wins', () => {
    const text = `${BASE}variants:\n  slow: { arrival.rate: 1, engine.throttle.k: 3 }\n`;
    const s = loadScenario(text, { variant: 'slow', set: ['arrival.rate=11', 'engine.throttle.k=4'] });
    expect(s).toMatchObject({ traffic: { arrival: { rate: 11 }, engine: { throttle: { k: 4 } } } });
    // The document that runs is the one with every override applied.
    expect(s.document).toMatchObject({ arrival: { rate: 11 }, engine: { throttle: { k: 4 } } });
    // A --set below a variant's whole mapping lands in it: the variant's other fields stay.
    const naive = loadScenario(BASE, { variant: 'naive', set: ['layers[*].retry.attempts=2'] });
    expect(naive.traffic.layers.map((l) => l.retry)).toEqual([
      { policy: 'naive', attempts: 2, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
      { policy: 'naive', attempts: 2, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
    ]);
  });

  it('refuses a --set that breaks the variant that runs, naming both', () => {
    const text = `${BASE}engine: { breaker: { openMs: 2s } }\nvariants:\n  bare: { engine.breaker: false }\n`;
    // As written the --set fits, and the variant it would break does not run.
    expect(loadScenario(text, { set: ['engine.breaker.openMs=1s'] }).traffic.engine.breaker).toMatchObject({
      openMs: 1000,
    });
    try {
      loadScenario(text, { variant: 'bare', set: ['engine.breaker.openMs=1s'] });
      expect.unreachable();
    } catch (e) {
      expect((e as ScenarioError).problems).toEqual([
        '--set "engine.breaker.openMs=1s" with variant bare: engine.breaker is a boolean, not a mapping',
      ]);
    }
  });

  it('validates every variant when loading, prefixing its problems', () => {
    expect(
      problemsOf(
        `${BASE}variants:\n  bad:\n    arrival.rate: fast\n    layers[5].retry: { policy: none }\n  typo: [ 'layers[*].retry.policy=engin' ]\n`,
      ),
    ).toEqual([
      'variants.bad: layers[5].retry: layers has 2 items, so [5] is past its end',
      'variants.typo: layers[0].retry.policy: expected one of none, naive, sdk, engine, got "engin" (did you mean engine?)',
      'variants.typo: layers[1].retry.policy: expected one of none, naive, sdk, engine, got "engin" (did you mean engine?)',
    ]);
    expect(problemsOf(`${BASE}variants:\n  x: [ 'nonsense' ]\n  y: 3\n`)).toEqual([
      'variants.x[0]: expected path=value',
      'variants.y: expected a mapping of path: value, or a list of "path=value", got 3',
    ]);
  });

  it('refuses an unknown variant, naming the known ones', () => {
    expect(() => loadScenario(BASE, { variant: 'engnie' })).toThrow(ScenarioError);
    expect(() => loadScenario(BASE, { variant: 'engnie' })).toThrow(
      '<inline>: 1 problem\n  variants: unknown variant "engnie" (known: naive, engine)',
    );
  });
});
