import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  CircuitBreaker,
  type BreakerOutcome,
  type BreakerTransition,
  type CircuitBreakerOptions,
} from '../../src/engine/circuit-breaker.js';
import { BreakerSet } from '../../src/engine/breaker-set.js';
import { OptionError } from '../../src/engine/errors.js';
import { MemoryStore } from '../../src/engine/store.js';

const base: Partial<CircuitBreakerOptions> = {
  windowMs: 10_000,
  buckets: 10,
  minimumCalls: 10,
  openMs: 1_000,
  maxOpenMs: 60_000,
  halfOpenProbes: 3,
};

function make(options: Partial<CircuitBreakerOptions> = {}): { b: CircuitBreaker; log: BreakerTransition[] } {
  const log: BreakerTransition[] = [];
  const b = new CircuitBreaker('tool', { ...base, ...options, onTransition: (t) => log.push(t) });
  return { b, log };
}

/** Acquires and records `n` calls at `now`; returns how many were let through. */
function calls(b: CircuitBreaker, n: number, outcome: BreakerOutcome, now: number, latencyMs = 10): number {
  let allowed = 0;
  for (let i = 0; i < n; i++) {
    const ticket = b.tryAcquire(now);
    if (ticket < 0) continue;
    allowed++;
    b.record(ticket, outcome, latencyMs, now);
  }
  return allowed;
}

/** Trips a fresh breaker at `now` with failures, then walks it to half-open. */
function tripAndWait(b: CircuitBreaker, now: number): number {
  calls(b, 10, 'failure', now);
  expect(b.state(now)).toBe('open');
  const halfOpenAt = now + b.retryAfterMs(now);
  expect(b.state(halfOpenAt)).toBe('half_open');
  return halfOpenAt;
}

describe('CircuitBreaker triggers', () => {
  it('trips on the failure ratio once minimumCalls is reached, not before', () => {
    const { b, log } = make();
    calls(b, 9, 'failure', 0);
    expect(b.state(0)).toBe('closed');
    calls(b, 1, 'success', 0);
    expect(b.state(0)).toBe('open');
    expect(log).toEqual([{ key: 'tool', from: 'closed', to: 'open', at: 0, cause: 'failure_ratio', openMs: 1_000 }]);
  });

  it('stays closed while the failure ratio is under the threshold', () => {
    const { b } = make({ failureRatio: 0.5 });
    for (let i = 0; i < 50; i++) calls(b, 1, i % 3 === 0 ? 'failure' : 'success', 0);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', calls: 50, failures: 17 });
  });

  it('counts 429s toward the throttled ratio, not the failure ratio', () => {
    const { b, log } = make({ failureRatio: 0.1 });
    calls(b, 10, 'throttled', 0);
    expect(log.map((t) => t.cause)).toEqual(['throttled_ratio']);
    expect(b.snapshot(0)).toMatchObject({ failures: 0, throttled: 10 });
  });

  it('never trips on 429s when throttledRatio is false', () => {
    const { b } = make({ throttledRatio: false });
    calls(b, 100, 'throttled', 0);
    expect(b.state(0)).toBe('closed');
  });

  it('trips on the slow-call ratio; slow means strictly over slowCallMs, whatever the outcome', () => {
    const { b, log } = make({ slowCallRatio: 0.5, slowCallMs: 100, failureRatio: false });
    calls(b, 10, 'success', 0, 100);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', slow: 0 });
    calls(b, 4, 'failure', 0, 101);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', slow: 4, failures: 4 });
    calls(b, 10, 'success', 0, 101);
    expect(log.map((t) => t.cause)).toEqual(['slow_call_ratio']);
  });

  it('does not trip on slow calls by default', () => {
    const { b } = make();
    calls(b, 50, 'success', 0, 1e9);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', slow: 50 });
  });

  it("does not count 'ignored' outcomes", () => {
    const { b } = make();
    calls(b, 100, 'ignored', 0);
    calls(b, 9, 'failure', 0);
    expect(b.snapshot(0)).toMatchObject({ state: 'closed', calls: 9 });
  });

  it('forgets old failures as the window slides', () => {
    const { b } = make();
    calls(b, 9, 'failure', 0);
    calls(b, 1, 'failure', 10_000); // the first nine are out of the window by now
    expect(b.snapshot(10_000)).toMatchObject({ state: 'closed', calls: 1, failures: 1 });
    calls(b, 9, 'success', 10_000);
    expect(b.state(10_000)).toBe('closed');

    const { b: same } = make();
    calls(same, 9, 'failure', 0);
    calls(same, 1, 'failure', 5_000); // still inside the window: trips
    expect(same.state(5_000)).toBe('open');
  });
});

describe('CircuitBreaker open state', () => {
  it('refuses until openUntil and says how long is left', () => {
    const { b } = make();
    calls(b, 10, 'failure', 100);
    expect(b.tryAcquire(100)).toBe(-1);
    expect(b.tryAcquire(1_099)).toBe(-1);
    expect(b.retryAfterMs(600)).toBe(500);
    expect(b.snapshot(600)).toMatchObject({ state: 'open', openUntil: 1_100, trips: 1, since: 100 });
    expect(b.tryAcquire(1_100)).toBeGreaterThanOrEqual(0);
    expect(b.state(1_100)).toBe('half_open');
  });

  it('moves to half-open lazily, dated at openUntil', () => {
    const { b, log } = make();
    calls(b, 10, 'failure', 0);
    expect(b.state(50_000)).toBe('half_open');
    expect(log[1]).toEqual({ key: 'tool', from: 'open', to: 'half_open', at: 1_000, cause: 'open_elapsed' });
  });

  it('grows the open duration on consecutive trips, capped, and resets it on close', () => {
    const { b, log } = make({ openMs: 1_000, openBackoffMultiplier: 2, maxOpenMs: 5_000, halfOpenProbes: 1 });
    let now = tripAndWait(b, 0);
    for (let i = 0; i < 4; i++) {
      calls(b, 1, 'failure', now);
      now += b.retryAfterMs(now);
    }
    const opens = log.filter((t) => t.to === 'open').map((t) => t.openMs);
    expect(opens).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(b.snapshot(now - 1)).toMatchObject({ state: 'open', trips: 5 });
    calls(b, 1, 'success', now);
    expect(b.snapshot(now)).toMatchObject({ state: 'closed', trips: 0 });
    calls(b, 10, 'failure', now);
    expect(log.at(-1)).toMatchObject({ to: 'open', openMs: 1_000, cause: 'failure_ratio' });
  });
});

describe('CircuitBreaker half-open', () => {
  it('lets the first probe through alone, then the rest together, and closes when all succeed, with a cleared window', () => {
    const { b, log } = make();
    const now = tripAndWait(b, 0);
    const first = b.tryAcquire(now);
    expect(first).toBe(b.generation());
    // the first probe is in flight: nothing else goes until it answers
    expect(b.tryAcquire(now)).toBe(-1);
    expect(b.retryAfterMs(now)).toBe(1_000);
    expect(b.snapshot(now)).toMatchObject({ state: 'half_open', probesInFlight: 1 });
    b.record(first, 'success', 10, now);
    expect(b.retryAfterMs(now)).toBe(0);
    const rest = [b.tryAcquire(now), b.tryAcquire(now)];
    expect(rest.every((t) => t === b.generation())).toBe(true);
    expect(b.tryAcquire(now)).toBe(-1);
    expect(b.snapshot(now)).toMatchObject({ state: 'half_open', probesInFlight: 2 });
    b.record(rest[0], 'success', 10, now);
    expect(b.state(now)).toBe('half_open');
    b.record(rest[1], 'success', 10, now);
    expect(log.at(-1)).toEqual({ key: 'tool', from: 'half_open', to: 'closed', at: now, cause: 'probes_succeeded' });
    expect(b.snapshot(now)).toMatchObject({ state: 'closed', calls: 0, failures: 0 });
    calls(b, 1, 'failure', now); // the pre-trip failures must not re-trip it
    expect(b.snapshot(now)).toMatchObject({ state: 'closed', calls: 1, failures: 1 });
  });

  it('reopens, for longer, on a failed or throttled probe', () => {
    for (const outcome of ['failure', 'throttled'] as const) {
      const { b, log } = make();
      const now = tripAndWait(b, 0);
      calls(b, 1, 'success', now);
      calls(b, 1, outcome, now);
      expect(log.at(-1)).toEqual({
        key: 'tool',
        from: 'half_open',
        to: 'open',
        at: now,
        cause: 'probe_failed',
        openMs: 2_000,
      });
      expect(b.tryAcquire(now)).toBe(-1);
    }
  });

  it('treats a slow probe as failed only when the slow-call trigger is on', () => {
    const on = make({ slowCallRatio: 0.9, slowCallMs: 100 }).b;
    let now = tripAndWait(on, 0);
    calls(on, 1, 'success', now, 101);
    expect(on.state(now)).toBe('open');

    const off = make({ slowCallMs: 100 }).b;
    now = tripAndWait(off, 0);
    calls(off, 3, 'success', now, 101);
    expect(off.state(now)).toBe('closed');
  });

  it("gives an 'ignored' probe's slot back", () => {
    const { b } = make();
    const now = tripAndWait(b, 0);
    const first = b.tryAcquire(now);
    expect(b.tryAcquire(now)).toBe(-1);
    b.record(first, 'ignored', 10, now);
    expect(b.snapshot(now).probesInFlight).toBe(0);
    expect(b.tryAcquire(now)).toBe(b.generation());
    expect(b.tryAcquire(now)).toBe(-1);
  });

  it('defaults maxOpenMs to twice openMs, so the open time grows once and stays bounded', () => {
    const { b, log } = make({ openMs: 2_500, maxOpenMs: undefined, openBackoffMultiplier: 2 });
    let now = 0;
    calls(b, 10, 'failure', now);
    for (let i = 0; i < 4; i++) {
      now += b.retryAfterMs(now);
      calls(b, 1, 'failure', now); // the one probe fails
    }
    expect(log.filter((t) => t.to === 'open').map((t) => t.openMs)).toEqual([2_500, 5_000, 5_000, 5_000, 5_000]);
  });

  it('does not close on one ticket recorded many times', () => {
    const { b } = make();
    const now = tripAndWait(b, 0);
    const ticket = b.tryAcquire(now);
    for (let i = 0; i < 5; i++) b.record(ticket, 'success', 10, now);
    expect(b.state(now)).toBe('half_open');
  });
});

describe('CircuitBreaker generations', () => {
  it('bumps the generation on every transition', () => {
    const { b, log } = make({ halfOpenProbes: 1 });
    expect(b.generation()).toBe(0);
    const now = tripAndWait(b, 0);
    calls(b, 1, 'success', now);
    expect(log.map((t) => t.to)).toEqual(['open', 'half_open', 'closed']);
    expect(b.generation()).toBe(3);
  });

  it('ignores late results from an older generation', () => {
    const { b, log } = make({ halfOpenProbes: 2 });
    const late = b.tryAcquire(0); // a slow call started while closed
    const now = tripAndWait(b, 0);
    b.record(late, 'failure', 10, now); // must not reopen the half-open breaker
    expect(b.state(now)).toBe('half_open');

    const probe = b.tryAcquire(now);
    b.record(probe, 'failure', 10, now); // the probe fails: open again
    const again = now + b.retryAfterMs(now);
    expect(b.state(again)).toBe('half_open');
    b.record(probe, 'success', 10, again); // a result from the old half-open does not count
    calls(b, 1, 'success', again);
    expect(b.state(again)).toBe('half_open');
    calls(b, 1, 'success', again);
    expect(b.state(again)).toBe('closed');
    b.record(late, 'failure', 10, again);
    b.record(-1, 'failure', 10, again);
    expect(b.snapshot(again)).toMatchObject({ calls: 0, failures: 0 });
    expect(log.filter((t) => t.to === 'closed')).toHaveLength(1);
  });

  it('keeps post-close calls across the switch back to the store window', () => {
    const { b } = make();
    const now = tripAndWait(b, 1_000); // tripped at 1_000: its failures leave the window at 11_000
    calls(b, 3, 'success', now);
    expect(b.state(now)).toBe('closed');
    calls(b, 5, 'success', 2_500);
    expect(b.snapshot(10_999)).toMatchObject({ calls: 5, failures: 0 });
    expect(b.snapshot(11_000)).toMatchObject({ calls: 5, failures: 0 });
    expect(b.snapshot(12_000)).toMatchObject({ calls: 0 });
  });
});

describe('CircuitBreaker options', () => {
  const bad: Array<[keyof CircuitBreakerOptions, unknown]> = [
    ['windowMs', 0],
    ['windowMs', Number.NaN],
    ['buckets', 1.5],
    ['buckets', 0],
    ['minimumCalls', 0],
    ['failureRatio', 0],
    ['failureRatio', 1.5],
    ['failureRatio', true],
    ['slowCallRatio', -0.1],
    ['throttledRatio', '0.5'],
    ['slowCallMs', -1],
    ['openMs', 0],
    ['openBackoffMultiplier', 0.5],
    ['maxOpenMs', 999],
    ['halfOpenProbes', 0],
    ['halfOpenProbes', 2.5],
    ['onTransition', 'log'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name} = ${String(value)}`, () => {
      const build = (): CircuitBreaker =>
        new CircuitBreaker('k', { openMs: 1_000, [name]: value } as Partial<CircuitBreakerOptions>);
      expect(build).toThrow(OptionError);
      expect(build).toThrow(`circuitBreaker.${name}`);
    });
  }

  it('shows the bad value in the message', () => {
    expect(() => new CircuitBreaker('k', { failureRatio: 1.5 })).toThrow(
      'circuitBreaker.failureRatio must be a number > 0 and <= 1, got 1.5',
    );
  });

  it('accepts ratio 1 and false, and treats undefined as the default', () => {
    expect(
      () => new CircuitBreaker('k', { failureRatio: 1, slowCallRatio: false, throttledRatio: undefined }),
    ).not.toThrow();
  });

  it('rejects an empty key', () => {
    expect(() => new CircuitBreaker('')).toThrow('circuitBreaker.key');
  });
});

describe('BreakerSet', () => {
  it('creates one breaker per key on first use, with shared options', () => {
    const log: BreakerTransition[] = [];
    const set = new BreakerSet({ ...base, onTransition: (t) => log.push(t) }, new MemoryStore());
    const a = set.get('model-a');
    expect(set.get('model-a')).toBe(a);
    set.get('tool-b');
    expect(set.keys()).toEqual(['model-a', 'tool-b']);
    calls(a, 10, 'failure', 0);
    expect(log.map((t) => t.key)).toEqual(['model-a']);
    expect(set.snapshot(0).map((s) => [s.key, s.state])).toEqual([
      ['model-a', 'open'],
      ['tool-b', 'closed'],
    ]);
  });

  it('checks options at construction', () => {
    expect(() => new BreakerSet({ halfOpenProbes: 0 })).toThrow(OptionError);
  });
});

type Op =
  | { kind: 'advance'; ms: number }
  | { kind: 'acquire' }
  | { kind: 'record'; pick: number; outcome: BreakerOutcome; latencyMs: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
  fc.record({ kind: fc.constant('acquire' as const) }),
  fc.record({
    kind: fc.constant('record' as const),
    pick: fc.nat(),
    outcome: fc.constantFrom<BreakerOutcome>('success', 'failure', 'throttled', 'ignored'),
    latencyMs: fc.integer({ min: 0, max: 400 }),
  }),
);

describe('CircuitBreaker properties', () => {
  it('hands out the first probe alone, at most halfOpenProbes net per half-open period, and refuses only when it must', () => {
    const optsArb = fc.record({
      minimumCalls: fc.integer({ min: 1, max: 5 }),
      halfOpenProbes: fc.integer({ min: 1, max: 4 }),
      slowCallRatio: fc.constantFrom<number | false>(false, 0.5),
      openMs: fc.integer({ min: 1, max: 2_000 }),
    });
    fc.assert(
      fc.property(optsArb, fc.array(opArb, { minLength: 20, maxLength: 300, size: 'max' }), (opts, ops) => {
        const b = new CircuitBreaker('p', { ...opts, slowCallMs: 200, windowMs: 5_000, buckets: 5 });
        const N = opts.halfOpenProbes;
        const net = new Map<number, number>(); // half-open generation -> granted minus given back
        const out = new Map<number, number>(); // half-open generation -> probes not yet recorded
        const won = new Map<number, number>(); // half-open generation -> probes that succeeded
        const open: number[] = []; // tickets not yet recorded, oldest first
        let now = 0;
        for (const op of ops) {
          if (op.kind === 'advance') now += op.ms;
          else if (op.kind === 'acquire') {
            const ticket = b.tryAcquire(now);
            const state = b.state(now);
            const g = b.generation();
            if (ticket < 0) {
              const full = (net.get(g) ?? 0) >= N || ((won.get(g) ?? 0) === 0 && (out.get(g) ?? 0) >= 1);
              expect(state === 'open' || (state === 'half_open' && full)).toBe(true);
              if (state === 'open') expect(b.retryAfterMs(now)).toBeGreaterThan(0);
              continue;
            }
            expect(ticket).toBe(g);
            expect(state).not.toBe('open');
            open.push(ticket);
            if (state === 'half_open') {
              net.set(g, (net.get(g) ?? 0) + 1);
              out.set(g, (out.get(g) ?? 0) + 1);
            }
            expect(net.get(g) ?? 0).toBeLessThanOrEqual(N);
            // before a probe has succeeded, only one is out at a time
            if ((won.get(g) ?? 0) === 0) expect(out.get(g) ?? 0).toBeLessThanOrEqual(1);
          } else if (open.length > 0) {
            const [ticket] = open.splice(op.pick % open.length, 1);
            const current = ticket === b.generation() && b.state(now) === 'half_open';
            const returned = op.outcome === 'ignored' && current;
            b.record(ticket, op.outcome, op.latencyMs, now);
            if (returned) net.set(ticket, net.get(ticket)! - 1);
            if (current) out.set(ticket, (out.get(ticket) ?? 1) - 1);
            const slow = op.latencyMs > 200 && opts.slowCallRatio !== false;
            if (current && op.outcome === 'success' && !slow) won.set(ticket, (won.get(ticket) ?? 0) + 1);
          }
        }
      }),
      { seed: 20240601, numRuns: 300 },
    );
  });
});
