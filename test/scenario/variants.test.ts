import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { defaultVariants, resolveVariant } from '../../src/scenario/variants.js';
import { BASE, problemsOf } from './helpers.js';

describe('variants', () => {
  it('defaults to naive and engine when the file names none', () => {
    const s = loadScenario(BASE);
    expect(s.variants).toEqual(defaultVariants());
    expect(s.variants.map((v) => v.name)).toEqual(['naive', 'engine']);
    expect(resolveVariant(s, 'naive').traffic.layers.map((l) => l.retry)).toEqual([
      { policy: 'naive', attempts: 3, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
      { policy: 'naive', attempts: 3, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
    ]);
    expect(resolveVariant(s, 'engine').traffic.layers.map((l) => l.retry)).toEqual([
      { policy: 'engine', engine: {} },
      { policy: 'engine', engine: {} },
    ]);
  });

  it('takes explicit variants, as path: value mappings or path=value lists', () => {
    const s = loadScenario(
      `${BASE}variants:\n  slow:\n    arrival.rate: 1\n    layers[0].timeout: 2s\n  fast: [ 'arrival.rate=50', 'seed=9' ]\n  same: {}\n`,
    );
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
    const slow = resolveVariant(s, 'slow');
    expect(slow).toMatchObject({
      traffic: { arrival: { rate: 1 }, layers: [{ timeoutMs: 2_000 }, {}] },
      source: '<inline> (variant slow)',
    });
    expect(resolveVariant(s, 'fast')).toMatchObject({ seed: 9, traffic: { arrival: { rate: 50 } } });
    expect(resolveVariant(s, 'same').traffic).toEqual(s.traffic);
  });

  it('applies on top of --set', () => {
    const s = loadScenario(BASE, { set: ['arrival.rate=11', 'engine.throttle.k=4'] });
    expect(resolveVariant(s, 'engine')).toMatchObject({
      traffic: { arrival: { rate: 11 }, engine: { throttle: { k: 4 } } },
    });
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
    const s = loadScenario(BASE);
    expect(() => resolveVariant(s, 'engnie')).toThrow(ScenarioError);
    expect(() => resolveVariant(s, 'engnie')).toThrow(
      '<inline>: 1 problem\n  variants: unknown variant "engnie" (known: naive, engine)',
    );
  });
});
