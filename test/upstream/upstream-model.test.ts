import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { UpstreamModel, MODEL_DEFAULTS, NETWORK_MS } from '../../src/upstream/upstream-model.js';
import { Detail, RequestFlag } from '../../src/upstream/response.js';
import type { FaultPhase, ModelConfig } from '../../src/upstream/config.js';
import { OptionError } from '../../src/engine/errors.js';
import { SeededRandom } from '../../src/engine/random.js';
import { TestScheduler } from './test-scheduler.js';
import { FaultTimeline } from '../../src/upstream/fault-timeline.js';

interface Answer {
  id: number;
  status: number;
  detail: number;
  tokens: number;
  retry: number;
  at: number;
}

/** One model `m` by default: 1 slot, no queue, ttft 100 ms, no per-token time. */
function setup(
  models: Array<Partial<ModelConfig>> = [{}],
  opts: { faults?: FaultPhase[]; cancelOnDisconnect?: boolean; seed?: number } = {},
) {
  const sched = new TestScheduler();
  const log: Answer[] = [];
  const cfgs = models.map((m, i) => ({
    name: i === 0 ? 'm' : `m${i}`,
    slots: 1,
    queue: 0,
    ttftMs: 100,
    tpotMs: 0,
    ...MODEL_DEFAULTS,
    ...m,
  }));
  const up = new UpstreamModel(
    { models: cfgs, faults: opts.faults ?? [], cancelOnDisconnect: opts.cancelOnDisconnect ?? false },
    sched,
    new SeededRandom(opts.seed ?? 1),
    { onResponse: (id, status, detail, tokens, retry, at) => log.push({ id, status, detail, tokens, retry, at }) },
  );
  /** Submits at time `at` (moving the clock there first). */
  const submit = (id: number, at: number, prompt = 10, out = 20, model = 0) => {
    sched.runUntil(at);
    up.submit(id, model, prompt, out, at);
  };
  const byId = (id: number) => log.filter((a) => a.id === id);
  return { sched, log, up, submit, byId };
}
const phase = (p: Partial<FaultPhase> & Pick<FaultPhase, 'kind'>): FaultPhase => ({
  fromMs: 0,
  toMs: 1_000,
  rate: 1,
  ...p,
});

describe('UpstreamModel capacity', () => {
  it('serves `slots` at once, queues FIFO, and sheds with 529 past the queue', () => {
    const { sched, log, up, submit } = setup([{ slots: 2, queue: 2 }]);
    for (let id = 1; id <= 5; id++) submit(id, 0);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 2, queued: 2 });
    sched.runAll();
    expect(log.map((a) => [a.id, a.status, a.at])).toEqual([
      [5, 529, NETWORK_MS],
      [1, 200, 100],
      [2, 200, 100],
      [3, 200, 200],
      [4, 200, 200],
    ]);
    expect(log[0].detail).toBe(Detail.Overloaded);
    expect(log[0].tokens).toBe(0);
    expect(up.stats(300).models[0]).toMatchObject({ busy: 0, queued: 0 });
  });

  it('serves a single slot strictly in arrival order', () => {
    const { sched, log, submit } = setup([{ queue: 10 }]);
    [3, 1, 4, 2].forEach((id, i) => submit(id, i));
    sched.runAll();
    expect(log.map((a) => [a.id, a.at])).toEqual([
      [3, 100],
      [1, 200],
      [4, 300],
      [2, 400],
    ]);
  });

  it('sheds with the configured status', () => {
    const { sched, log, submit } = setup([{ shedStatus: 503 }]);
    submit(1, 0);
    submit(2, 0);
    sched.runAll();
    expect(log[0]).toMatchObject({ id: 2, status: 503, detail: Detail.Overloaded });
  });

  it('gives a freed slot to the queue before anything the listener submits in response', () => {
    const sched = new TestScheduler();
    const order: Array<[number, number]> = [];
    const cfg = { name: 'm', slots: 1, queue: 1, ttftMs: 100, tpotMs: 0, ...MODEL_DEFAULTS };
    const up: UpstreamModel = new UpstreamModel(
      { models: [cfg], faults: [], cancelOnDisconnect: false },
      sched,
      new SeededRandom(1),
      {
        onResponse: (id, _status, _detail, _tokens, _retry, at) => {
          order.push([id, at]);
          if (order.length === 1) up.submit(1, 0, 10, 20, at); // the same reqId again, at once: it must wait behind 2
        },
      },
    );
    up.submit(1, 0, 10, 20, 0);
    up.submit(2, 0, 10, 20, 0);
    sched.runAll();
    expect(order).toEqual([
      [1, 100],
      [2, 200],
      [1, 300],
    ]);
  });
});

describe('UpstreamModel service time', () => {
  it('takes ttft + output × tpot and reports prompt + output tokens', () => {
    const { sched, log, submit } = setup([{ ttftMs: 50, tpotMs: 2 }]);
    submit(1, 10, 30, 100);
    sched.runAll();
    expect(log).toEqual([{ id: 1, status: 200, detail: Detail.None, tokens: 130, retry: -1, at: 260 }]);
  });

  it('stretches service with load: × (1 + loadStretch × others busy / slots)', () => {
    const { sched, log, submit } = setup([{ slots: 4, loadStretch: 1 }]);
    for (let id = 1; id <= 4; id++) submit(id, 0);
    sched.runAll();
    expect(log.map((a) => a.at)).toEqual([100, 125, 150, 175]);
  });

  it('applies the latency factor active when service starts', () => {
    const { sched, log, submit } = setup([{ queue: 1 }], {
      faults: [phase({ kind: 'latency', factor: 2, toMs: 150 })],
    });
    submit(1, 0); // starts at 0, in the phase: 200 ms
    submit(2, 10); // waits; starts at 200, after the phase: 100 ms
    sched.runAll();
    expect(log.map((a) => [a.id, a.at])).toEqual([
      [1, 200],
      [2, 300],
    ]);
  });
});

describe('UpstreamModel quotas', () => {
  it('refuses past the RPM with the exact retry-after, and the retry then succeeds', () => {
    const { sched, log, up, submit } = setup([{ rpm: 2, slots: 10 }]);
    submit(1, 0);
    submit(2, 10);
    submit(3, 20);
    sched.runUntil(100);
    expect(log.find((a) => a.id === 3)).toEqual({
      id: 3,
      status: 429,
      detail: Detail.RateLimitRequests,
      tokens: 0,
      retry: 59_980,
      at: 21,
    });
    submit(3, 20 + 59_980); // the request at 0 has left the window; the refused one never entered it
    submit(4, 60_000);
    sched.runAll();
    expect(log.filter((a) => a.id === 3).map((a) => a.status)).toEqual([429, 200]);
    expect(log.find((a) => a.id === 4)).toMatchObject({ status: 429, retry: 10 });
    expect(up.stats(0).models[0].byStatus).toEqual({ 200: 3, 429: 2 });
  });

  it('refuses past the TPM counting prompt + max output', () => {
    const { sched, log, submit } = setup([{ tpm: 1_000, slots: 10 }]);
    submit(1, 0, 300, 300);
    submit(2, 1_000, 200, 100);
    submit(3, 2_000, 100, 100); // 900 + 200 > 1000: needs the 600 taken at 0 to leave
    sched.runUntil(3_000);
    expect(log.find((a) => a.id === 3)).toMatchObject({ status: 429, detail: Detail.RateLimitTokens, retry: 58_000 });
    submit(3, 60_000, 100, 100);
    submit(5, 60_000, 600, 600); // larger than the whole quota: no wait helps
    sched.runAll();
    expect(log.filter((a) => a.id === 3).map((a) => a.status)).toEqual([429, 200]);
    expect(log.find((a) => a.id === 5)).toMatchObject({ status: 429, detail: Detail.RateLimitTokens, retry: -1 });
  });

  it('refuses a prompt + output beyond the context window with 400, before any quota', () => {
    const { sched, log, submit } = setup([{ contextTokens: 1_000, rpm: 1 }]);
    submit(1, 0, 600, 500);
    submit(2, 0, 500, 500);
    sched.runAll();
    expect(log.map((a) => [a.id, a.status, a.detail, a.tokens])).toEqual([
      [1, 400, Detail.ContextLength, 0],
      [2, 200, Detail.None, 1_000],
    ]);
  });

  it('refuses on quota without taking capacity', () => {
    const { sched, log, submit } = setup([{ rpm: 1, queue: 0 }]);
    submit(1, 0);
    submit(2, 0);
    sched.runAll();
    expect(log.map((a) => [a.id, a.status])).toEqual([
      [2, 429],
      [1, 200],
    ]);
  });
});

describe('UpstreamModel faults', () => {
  const kinds: Array<[FaultPhase, number, number]> = [
    [phase({ kind: 'outage', fromMs: 100, toMs: 200 }), 503, Detail.Fault],
    [phase({ kind: 'outage', fromMs: 100, toMs: 200, status: 502 }), 502, Detail.Fault],
    [phase({ kind: 'errors', fromMs: 100, toMs: 200, status: { 500: 1 } }), 500, Detail.Fault],
    [phase({ kind: 'reset', fromMs: 100, toMs: 200 }), 0, Detail.Reset],
    [phase({ kind: 'quota', fromMs: 100, toMs: 200 }), 429, Detail.InsufficientQuota],
  ];
  for (const [p, status, detail] of kinds) {
    it(`answers ${p.kind} ${status} at once inside its phase only`, () => {
      const { sched, log, submit } = setup([{ slots: 10 }], { faults: [p] });
      submit(1, 50);
      submit(2, 150);
      submit(3, 200);
      sched.runAll();
      expect(log.map((a) => [a.id, a.status, a.detail, a.at])).toEqual(
        [
          [2, status, detail, 150 + NETWORK_MS],
          [1, 200, Detail.None, 150],
          [3, 200, Detail.None, 300],
        ].sort((a, b) => a[3] - b[3] || 0),
      );
    });
  }

  it('hits a `rate` share of requests, drawing statuses from the weights', () => {
    const { sched, log, submit } = setup([{ slots: 1e9 }], {
      faults: [phase({ kind: 'errors', rate: 0.3, status: { 503: 2, 429: 1 }, toMs: Infinity })],
      seed: 42,
    });
    const n = 20_000;
    for (let id = 0; id < n; id++) submit(id, 0);
    sched.runAll();
    const share = (s: number) => log.filter((a) => a.status === s).length / n;
    expect(share(200)).toBeGreaterThan(0.68);
    expect(share(200)).toBeLessThan(0.72);
    expect(share(503)).toBeGreaterThan(0.18);
    expect(share(503)).toBeLessThan(0.22);
    expect(share(429)).toBeGreaterThan(0.08);
    expect(share(429)).toBeLessThan(0.12);
  });

  it('breaks midstream after ttft + a share of the tokens, with 200 and the tokens done', () => {
    const { sched, log, submit } = setup([{ slots: 100, ttftMs: 100, tpotMs: 1 }], {
      faults: [phase({ kind: 'midstream', rate: 1 })],
    });
    for (let id = 0; id < 50; id++) submit(id, 0, 10, 200);
    submit(99, 1_000, 10, 200);
    sched.runAll();
    const broken = log.filter((a) => a.detail === Detail.MidStream);
    expect(broken).toHaveLength(50);
    for (const a of broken) {
      expect(a.status).toBe(200);
      expect(a.tokens).toBeGreaterThanOrEqual(10);
      expect(a.tokens).toBeLessThan(210);
      expect(a.at).toBe(100 + (a.tokens - 10)); // ttft + n × tpot
    }
    expect(new Set(broken.map((a) => a.tokens)).size).toBeGreaterThan(20);
    expect(log.find((a) => a.id === 99)).toMatchObject({ status: 200, detail: Detail.None, tokens: 210 });
  });

  it('hangs without an answer or a slot until cancelled; the reqId is free again after cancel', () => {
    const { sched, log, up, submit } = setup([{ slots: 1 }], { faults: [phase({ kind: 'hang', toMs: 100 })] });
    submit(1, 0);
    submit(2, 50);
    sched.runAll();
    expect(log).toEqual([]);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 0, attempts: 2 });
    up.cancel(1, 5_000);
    submit(1, 5_000); // after the phase, the slot is free
    sched.runAll();
    expect(log).toEqual([{ id: 1, status: 200, detail: Detail.None, tokens: 30, retry: -1, at: 5_100 }]);
    expect(up.stats(0).models[0].cancelled).toBe(1);
  });

  it('hits only the model a phase names', () => {
    const { sched, log, up, submit } = setup([{}, {}], { faults: [phase({ kind: 'outage', model: 'm1' })] });
    expect([up.modelIndex('m'), up.modelIndex('m1'), up.modelIndex('zzz')]).toEqual([0, 1, -1]);
    submit(1, 0, 10, 20, 0);
    submit(2, 0, 10, 20, 1);
    sched.runAll();
    expect(log.map((a) => [a.id, a.status])).toEqual([
      [2, 503],
      [1, 200],
    ]);
  });
});

describe('UpstreamModel cancel', () => {
  it('without cancel-on-disconnect: work goes on, holds its slot, nothing is delivered, tokens are wasted', () => {
    const { sched, log, up, submit } = setup([{ queue: 2 }], { cancelOnDisconnect: false });
    submit(1, 0, 10, 20); // serving
    submit(2, 0, 5, 5); // queued
    submit(3, 0); // queued
    sched.runUntil(50);
    up.cancel(1, 50);
    up.cancel(2, 50);
    expect(up.stats(50).models[0]).toMatchObject({ busy: 1, queued: 2 });
    sched.runAll();
    expect(log).toEqual([{ id: 3, status: 200, detail: Detail.None, tokens: 30, retry: -1, at: 300 }]);
    expect(up.stats(300).models[0]).toMatchObject({ wastedTokens: 40, tokensServed: 30, cancelled: 2 });
  });

  it('with cancel-on-disconnect: the slot and the queue place are freed at once, nothing is wasted', () => {
    const { sched, log, up, submit } = setup([{ queue: 1 }], { cancelOnDisconnect: true });
    submit(1, 0); // serving
    submit(2, 0); // queued
    sched.runUntil(50);
    up.cancel(2, 50);
    submit(3, 50); // takes the freed queue place instead of being shed
    up.cancel(1, 60); // 3 starts now
    expect(up.stats(60).models[0]).toMatchObject({ busy: 1, queued: 0 });
    submit(4, 60); // queued behind 3
    sched.runAll();
    expect(log.map((a) => [a.id, a.status, a.at])).toEqual([
      [3, 200, 160],
      [4, 200, 260],
    ]);
    expect(up.stats(300).models[0]).toMatchObject({ wastedTokens: 0, busy: 0, queued: 0 });
  });

  it('drops an immediate answer cancelled before it arrives, and ignores unknown ids', () => {
    const { sched, log, up, submit } = setup([{}], { faults: [phase({ kind: 'outage' })] });
    submit(1, 0);
    up.cancel(1, 0.5);
    up.cancel(12345, 0.5);
    sched.runAll();
    expect(log).toEqual([]);
  });

  it('takes any number as a reqId: small integers, large ones, negatives and fractions', () => {
    const { sched, log, up, submit } = setup([{ slots: 10 }]);
    const ids = [0, 5_000, 2 ** 20, 2 ** 40, -3, 0.5];
    ids.forEach((id) => submit(id, 0));
    up.cancel(2 ** 40, 10);
    up.cancel(5_000, 10);
    sched.runAll();
    expect(log.map((a) => a.id).sort((a, b) => a - b)).toEqual([-3, 0, 0.5, 2 ** 20]);
  });

  it('property: every request not cancelled gets exactly one answer; capacity is never exceeded', () => {
    const op = fc.record({ dt: fc.integer({ min: 0, max: 80 }), cancel: fc.boolean(), which: fc.nat() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.boolean(), (ops, cod) => {
        const { sched, log, up, submit } = setup(
          [{ slots: 2, queue: 3, ttftMs: { dist: 'uniform', min: 50, max: 150 } }],
          { cancelOnDisconnect: cod },
        );
        const cancelled = new Set<number>();
        let now = 0;
        ops.forEach(({ dt, cancel, which }, id) => {
          now += dt;
          submit(id, now);
          if (cancel) {
            const victim = which % (id + 1);
            if (log.every((a) => a.id !== victim)) cancelled.add(victim);
            up.cancel(victim, now);
          }
          const s = up.stats(now).models[0];
          expect(s.busy).toBeLessThanOrEqual(2);
          expect(s.queued).toBeLessThanOrEqual(3);
        });
        sched.runAll();
        for (let id = 0; id < ops.length; id++)
          expect(log.filter((a) => a.id === id).length).toBe(cancelled.has(id) ? 0 : 1);
        const s = up.stats(now).models[0];
        expect(s.busy + s.queued).toBe(0);
        if (cod) expect(s.wastedTokens).toBe(0);
      }),
    );
  });
});

describe('UpstreamModel stats and config', () => {
  it('counts attempts, statuses, details and tokens per model', () => {
    const { sched, up, submit } = setup([{}, { rpm: 1 }]);
    submit(1, 0, 10, 20, 0);
    submit(2, 0, 10, 20, 0); // shed
    submit(3, 0, 1, 2, 1);
    submit(4, 0, 1, 2, 1); // 429
    sched.runAll();
    const [a, b] = up.stats(200).models;
    expect(a).toEqual({
      name: 'm',
      busy: 0,
      queued: 0,
      attempts: 2,
      byStatus: { 200: 1, 529: 1 },
      byDetail: { None: 1, Overloaded: 1 },
      tokensServed: 30,
      wastedTokens: 0,
      cancelled: 0,
    });
    expect(b).toMatchObject({
      name: 'm1',
      attempts: 2,
      byStatus: { 200: 1, 429: 1 },
      byDetail: { None: 1, RateLimitRequests: 1 },
      tokensServed: 3,
    });
  });

  it('is deterministic for a seed', () => {
    const run = (seed: number) => {
      const { sched, log, submit } = setup(
        [{ slots: 3, queue: 5, ttftMs: { dist: 'lognormal', median: 100, p99: 800 } }],
        {
          faults: [phase({ kind: 'errors', rate: 0.2 })],
          seed,
        },
      );
      for (let id = 0; id < 200; id++) submit(id, id * 5);
      sched.runAll();
      return JSON.stringify(log);
    };
    expect(run(3)).toBe(run(3));
    expect(run(3)).not.toBe(run(4));
  });

  it('rejects bad models with the option named', () => {
    const bad = (m: Partial<ModelConfig>, re: RegExp) => {
      expect(() => setup([m])).toThrow(OptionError);
      expect(() => setup([m])).toThrow(re);
    };
    bad({ slots: 0 }, /upstream\.models\[0\]\.slots must be an integer >= 1, got 0/);
    bad({ queue: -1 }, /models\[0\]\.queue/);
    bad({ shedStatus: 99 }, /models\[0\]\.shedStatus/);
    bad({ rpm: 0 }, /models\[0\]\.rpm/);
    bad({ tpm: -5 }, /models\[0\]\.tpm/);
    bad({ loadStretch: -1 }, /models\[0\]\.loadStretch/);
    bad({ contextTokens: 0 }, /models\[0\]\.contextTokens/);
    bad({ name: '' }, /models\[0\]\.name/);
    expect(() => setup([{}, { name: 'm' }])).toThrow(/names must be unique, got "m" twice/);
    expect(() => setup([{ queue: Infinity }])).not.toThrow();
  });
});

describe('UpstreamModel.setFaults and quotas', () => {
  it('swaps the fault phases of a running model, keeping its busy slots and quotas', () => {
    const { sched, log, up, submit } = setup([{ slots: 1, queue: 4, rpm: 100 }]);
    submit(1, 0);
    up.setFaults(new FaultTimeline([phase({ kind: 'outage', status: 503 })], ['m'], new SeededRandom(1)));
    submit(2, 10);
    sched.runAll();
    expect(log.map((a) => [a.id, a.status])).toEqual([
      [2, 503],
      [1, 200],
    ]);
    expect(up.quotas(0).requests?.remaining(10)).toBe(99); // the outage refused request 2 before the quota: only 1 counted
    expect(up.quotas(0).tokens).toBeUndefined();
  });
});

describe('UpstreamModel lead: what a request waited before it was submitted', () => {
  it('comes off its first token (the rest of the answer moves with it), never before now', () => {
    const sched = new TestScheduler();
    const events: string[] = [];
    const up = new UpstreamModel(
      {
        models: [{ name: 'm', slots: 10, queue: 0, ttftMs: 100, tpotMs: 10, ...MODEL_DEFAULTS }],
        faults: [],
        cancelOnDisconnect: false,
      },
      sched,
      new SeededRandom(1),
      {
        onResponse: (id, _status, _detail, _tokens, _retry, at) => events.push(`${id} done ${at}`),
        onStream: (id, _event, ms, _tokens, at) => events.push(`${id} first ${at} (${ms} ms to go)`),
      },
    );
    up.submit(1, 0, 10, 5, 0, RequestFlag.Stream); // no lead: first token at 100, done at 150
    up.submit(2, 0, 10, 5, 0, RequestFlag.Stream, 5, 30); // 30 ms waited: 70 and 120
    up.submit(3, 0, 10, 5, 0, RequestFlag.Stream, 5, 500); // waited past its ttft: first token now
    up.submit(4, 0, 10, 5, 0, 0, 5, 30); // unstreamed: its answer 30 ms sooner
    sched.runUntil(1_000);
    expect(events.sort()).toEqual(
      [
        '1 first 100 (50 ms to go)',
        '1 done 150',
        '2 first 70 (50 ms to go)',
        '2 done 120',
        '3 first 0 (50 ms to go)',
        '3 done 50',
        '4 done 120',
      ].sort(),
    );
  });
});
