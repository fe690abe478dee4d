import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { BASE, edit } from './helpers.js';

describe('defaults', () => {
  const s = loadScenario(BASE);

  it('fills in the scenario-level defaults', () => {
    expect(s).toMatchObject({
      name: 't',
      description: '',
      seed: 1,
      durationMs: 10_000,
      drainMs: 120_000,
      expect: [],
      source: '<inline>',
    });
    expect(s.traffic.deadlineMs).toBe(Infinity);
    expect(s.upstream.cancelOnDisconnect).toBe(false);
    expect(s.upstream.faults).toEqual([]);
  });

  it('fills in layers: fan-out 1, no timeout, the policies’ own defaults, the last layer’s model', () => {
    const [agent, llm] = s.traffic.layers;
    expect(agent).toEqual({
      name: 'agent',
      fanout: 2,
      timeoutMs: Infinity,
      retry: { policy: 'naive', attempts: 3, backoff: { strategy: 'exponential', baseMs: 100, capMs: 10_000 } },
    });
    expect(llm).toEqual({
      name: 'llm',
      fanout: 1,
      timeoutMs: Infinity,
      retry: { policy: 'sdk', sdk: 'openai', maxRetries: 2, runnerRetries: 0 },
      models: ['primary'],
    });
    const more = loadScenario(
      edit(
        'retry: { policy: naive }',
        'retry: { policy: engine }, timeout: 2s',
        edit('retry: { policy: sdk }', 'retry: { policy: naive, backoff: { baseMs: 50ms } }'),
      ),
    );
    expect(more.traffic.layers[0]).toMatchObject({ timeoutMs: 2_000, retry: { policy: 'engine', engine: {} } });
    expect(more.traffic.layers[1].retry).toEqual({
      policy: 'naive',
      attempts: 3,
      backoff: { strategy: 'exponential', baseMs: 50, capMs: 10_000 },
    });
    expect(loadScenario(edit(', retry: { policy: sdk }', '')).traffic.layers[1].retry).toEqual({ policy: 'none' });
  });

  it('fills in the engine options', () => {
    expect(s.traffic.engine).toEqual({
      profile: 'http',
      maxAttempts: 3,
      backoff: {},
      retryBudget: {},
      throttle: {},
      breaker: {},
      limits: [],
      concurrency: false,
      minAttemptMs: 0,
      state: 'local',
    });
    const e = loadScenario(
      edit(
        'upstream:',
        'engine: { throttle: { k: 3 }, breaker: false, concurrency: true, minAttemptMs: 1s }\nupstream:',
      ),
    ).traffic.engine;
    expect(e).toEqual({
      profile: 'http',
      maxAttempts: 3,
      backoff: {},
      retryBudget: {},
      throttle: { k: 3 },
      breaker: false,
      limits: [],
      concurrency: {},
      minAttemptMs: 1_000,
      state: 'local',
    });
  });

  it('fills in models and faults', () => {
    expect(s.upstream.models[0]).toEqual({
      name: 'primary',
      slots: 8,
      queue: 16,
      shedStatus: 529,
      ttftMs: 200,
      tpotMs: 10,
      loadStretch: 0,
      contextTokens: Infinity,
    });
    const f = loadScenario(
      `${BASE}  faults:\n    - { kind: errors }\n    - { kind: outage, from: 5s, to: 1m, model: primary, status: 503 }\n`,
    ).upstream.faults;
    expect(f).toEqual([
      { kind: 'errors', fromMs: 0, toMs: Infinity, rate: 1 },
      { kind: 'outage', fromMs: 5_000, toMs: 60_000, model: 'primary', rate: 1, status: 503 },
    ]);
  });

  it('reads durations with units everywhere, numbers as ms', () => {
    const d = loadScenario(
      edit(
        'duration: 10s',
        'duration: 1.5m\ndrain: 2000\ndeadline: 45s',
        edit(
          'ttft: 200ms',
          'ttft: { dist: lognormal, median: 300ms, p99: 2s }',
          edit('type: constant, rate: 5', 'type: burst, rate: 5, burstRate: 50, every: 1m, length: 5s'),
        ),
      ),
    );
    expect(d).toMatchObject({
      durationMs: 90_000,
      drainMs: 2_000,
      traffic: {
        deadlineMs: 45_000,
        arrival: { type: 'burst', rate: 5, burstRate: 50, everyMs: 60_000, lengthMs: 5_000 },
      },
    });
    expect(d.upstream.models[0].ttftMs).toEqual({ dist: 'lognormal', median: 300, p99: 2_000 });
    const closed = loadScenario(
      edit('type: constant, rate: 5', 'type: closed, users: 10, think: { dist: uniform, min: 1s, max: 3s }'),
    );
    expect(closed.traffic.arrival).toEqual({
      type: 'closed',
      users: 10,
      thinkMs: { dist: 'uniform', min: 1_000, max: 3_000 },
    });
  });

  it('keeps fan-out distributions (continuous ones are rounded up at sampling)', () => {
    const s2 = loadScenario(edit('fanout: 2', 'fanout: { dist: choice, values: [1, 3], weights: [0.5, 0.5] }'));
    expect(s2.traffic.layers[0].fanout).toEqual({ dist: 'choice', values: [1, 3], weights: [0.5, 0.5] });
    expect(
      loadScenario(edit('fanout: 2', 'fanout: { dist: exponential, mean: 2.5 }')).traffic.layers[0].fanout,
    ).toEqual({ dist: 'exponential', mean: 2.5 });
  });

  it('keeps the document for variants, and expectations raw', () => {
    const x = loadScenario(`${BASE}expect: ['amplification < 1.5', 'goodput > 10']\n`);
    expect(x.expect).toEqual(['amplification < 1.5', 'goodput > 10']);
    expect(x.document).toMatchObject({ name: 't', layers: [{ name: 'agent' }, { name: 'llm' }] });
  });
});
