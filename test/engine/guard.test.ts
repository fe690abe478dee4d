import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../src/engine/classify.js';
import { OptionError, ShedError } from '../../src/engine/errors.js';
import { Step } from '../../src/engine/guard-call.js';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { coreOf, Guard, type AttemptContext } from '../../src/engine/guard.js';
import type { GuardOptions } from '../../src/engine/guard-options.js';
import { MemoryIdempotencyStore } from '../../src/engine/idempotency-store.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { drive } from '../helpers/drive.js';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
    readonly error?: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

function setup(options: Partial<GuardOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const events: GuardEvent[] = [];
  const guard = new Guard({ clock, random: new SeededRandom(1), onEvent: (e) => events.push(e), ...options });
  return { clock, guard, events };
}

/** An attempt function that answers from a script: a status per attempt (200 = success). */
function scripted(statuses: number[], headers: Record<string, string> = {}) {
  const seen: AttemptContext[] = [];
  let i = 0;
  const fn = async (ctx: AttemptContext): Promise<string> => {
    seen.push({ ...ctx });
    const status = statuses[Math.min(i++, statuses.length - 1)];
    if (status === 200) return `ok from ${ctx.targetName}`;
    throw new HttpError(status, headers);
  };
  return { fn, seen, calls: () => i };
}

describe('Guard.run', () => {
  it('returns the value of a first-time success', async () => {
    const { guard, clock } = setup();
    const s = scripted([200]);
    const r = await drive(clock, guard.runDetailed(s.fn));
    expect(r).toEqual({
      value: 'ok from default',
      ok: true,
      degraded: false,
      target: 'default',
      answeredBy: expect.objectContaining({ name: 'default', index: 0, key: 'default' }),
      attempts: 1,
      replayed: false,
    });
  });

  it('run resolves to the bare value', async () => {
    const { guard, clock } = setup();
    await expect(drive(clock, guard.run(scripted([503, 200]).fn))).resolves.toBe('ok from default');
  });

  it('retries a 503 with backoff and succeeds', async () => {
    const { guard, clock, events } = setup({ backoff: { strategy: 'exponential', baseMs: 100 } });
    const s = scripted([503, 503, 200]);
    const start = clock.now();
    const r = await drive(clock, guard.runDetailed(s.fn));
    expect(r.attempts).toBe(3);
    expect(clock.now() - start).toBe(100 + 200);
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { delayMs: number }).delayMs)).toEqual([100, 200]);
  });

  it('makes no attempt for a caller that has already given up', async () => {
    const { guard, clock } = setup();
    const s = scripted([200]);
    const ac = new AbortController();
    ac.abort(new Error('caller left'));
    await expect(drive(clock, guard.run(s.fn, { signal: ac.signal }))).rejects.toThrow('caller left');
    expect(s.calls()).toBe(0);
  });

  it('treats a synchronous throw like a rejection', async () => {
    const { guard, clock } = setup({ backoff: { strategy: 'exponential', baseMs: 1 } });
    let n = 0;
    const fn = (): string => {
      if (n++ === 0) throw new HttpError(503);
      return 'second';
    };
    await expect(drive(clock, guard.run(fn))).resolves.toBe('second');
    expect(n).toBe(2);
  });

  it('does not retry a 400 and rethrows it', async () => {
    const { guard, clock } = setup();
    const s = scripted([400]);
    await expect(drive(clock, guard.runDetailed(s.fn))).rejects.toMatchObject({ status: 400 });
    expect(s.calls()).toBe(1);
  });

  it('honours retry-after-ms as a lower bound on the wait', async () => {
    const { guard, clock } = setup({ backoff: { strategy: 'exponential', baseMs: 10 } });
    const s = scripted([429, 200], { 'retry-after-ms': '1500' });
    const start = clock.now();
    await drive(clock, guard.runDetailed(s.fn));
    expect(clock.now() - start).toBe(1500);
  });

  it('fails fast when retry-after would pass the deadline', async () => {
    const { guard, clock } = setup();
    const s = scripted([429, 200], { 'retry-after': '30' });
    const start = clock.now();
    const err = await drive(clock, guard.runDetailed(s.fn, { timeoutMs: 10_000 })).catch((e) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err.reason).toBe('deadline');
    expect(err.cause).toMatchObject({ status: 429 });
    expect(clock.now()).toBe(start);
  });

  it('gives up with the last error when attempts run out', async () => {
    const { guard, clock } = setup({ maxAttempts: 2, backoff: { strategy: 'exponential', baseMs: 1 } });
    const s = scripted([500]);
    await expect(drive(clock, guard.runDetailed(s.fn))).rejects.toMatchObject({ status: 500 });
    expect(s.calls()).toBe(2);
  });

  it('sheds retries once the retry budget is spent', async () => {
    const { guard, clock, events } = setup({
      retryBudget: { ratio: 0, minRetriesPerSec: 0.1, windowMs: 10_000 },
      backoff: { strategy: 'exponential', baseMs: 1 },
      breaker: false,
    });
    const s = scripted([503]);
    // The floor allows one retry in the window: the first call gets it, then is refused a second.
    const first = await drive(clock, guard.runDetailed(s.fn)).catch((e) => e);
    expect(first).toMatchObject({ reason: 'budget', cause: { status: 503 } });
    expect(s.calls()).toBe(2);
    const err = await drive(clock, guard.runDetailed(s.fn)).catch((e) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err.reason).toBe('budget');
    expect(s.calls()).toBe(3);
    expect(events.some((e) => e.type === 'shed' && e.reason === 'budget' && e.retry)).toBe(true);
  });

  it('trips the breaker and falls back to the next target, marking results degraded', async () => {
    const { guard, clock, events } = setup({
      targets: ['primary', 'secondary'],
      maxAttempts: 1,
      breaker: { minimumCalls: 4, failureRatio: 0.5 },
      throttle: false,
    });
    const fn = async (ctx: AttemptContext) => {
      if (ctx.targetName === 'primary') throw new HttpError(500);
      return 'fallback answer';
    };
    for (let i = 0; i < 4; i++) {
      const r = await drive(clock, guard.runDetailed(fn));
      expect(r.degraded).toBe(true); // attempts exhausted on primary → secondary
    }
    expect(events.some((e) => e.type === 'trip' && e.target === 'primary' && e.cause === 'failure_ratio')).toBe(true);
    const before = events.filter((e) => e.type === 'attempt' && e.target === 'primary').length;
    const r = await drive(clock, guard.runDetailed(fn));
    expect(r).toMatchObject({ value: 'fallback answer', degraded: true, target: 'secondary', attempts: 1 });
    expect(events.filter((e) => e.type === 'attempt' && e.target === 'primary').length).toBe(before);
    expect(events.some((e) => e.type === 'fallback' && e.why === 'breaker_open')).toBe(true);
  });

  it('falls back instead of shedding when the budget refuses a retry on the primary', async () => {
    const { guard, clock, events } = setup({
      targets: ['primary', 'secondary'],
      breaker: false,
      throttle: false,
      retryBudget: { ratio: 0, minRetriesPerSec: 0 },
    });
    const fn = async (ctx: AttemptContext) => {
      if (ctx.targetName === 'primary') throw new HttpError(503);
      return 'from secondary';
    };
    const r = await drive(clock, guard.runDetailed(fn));
    expect(r).toMatchObject({ value: 'from secondary', degraded: true, attempts: 2 });
    expect(events.some((e) => e.type === 'fallback' && e.why === 'budget')).toBe(true);
    expect(events.some((e) => e.type === 'shed')).toBe(false);
  });

  it('falls back at once on a context-length error', async () => {
    const { guard, clock } = setup({ targets: ['small', 'large'] });
    const fn = async (ctx: AttemptContext) => {
      if (ctx.targetName === 'small')
        throw new HttpError(400, {}, { code: 'context_length_exceeded', message: 'too long' });
      return 'done by large';
    };
    const r = await drive(clock, guard.runDetailed(fn));
    expect(r).toMatchObject({ value: 'done by large', degraded: true, attempts: 2 });
  });

  it('sheds on an open breaker when no fallback is left, with a retry-after hint', async () => {
    const { guard, clock } = setup({
      maxAttempts: 1,
      throttle: false,
      breaker: { minimumCalls: 2, failureRatio: 0.5, openMs: 5000 },
    });
    const s = scripted([500]);
    for (let i = 0; i < 2; i++) await drive(clock, guard.runDetailed(s.fn)).catch(() => {});
    const err = await drive(clock, guard.runDetailed(s.fn)).catch((e) => e);
    expect(err).toMatchObject({ reason: 'breaker', retryAfterMs: 5000 });
  });

  it('cuts an attempt at attemptTimeoutMs and retries it as a timeout', async () => {
    const { guard, clock, events } = setup({ attemptTimeoutMs: 1000, backoff: { strategy: 'exponential', baseMs: 1 } });
    let n = 0;
    const fn = (ctx: AttemptContext) =>
      new Promise<string>((resolve, reject) => {
        if (n++ > 0) return resolve('second try');
        ctx.signal!.addEventListener('abort', () => reject(ctx.signal!.reason));
      });
    const r = await drive(clock, guard.runDetailed(fn));
    expect(r.value).toBe('second try');
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ class: 'timeout' });
  });

  it('reserves tokens per attempt, reconciles from usage, and sheds on an empty bucket', async () => {
    const { guard, clock, events } = setup({
      limits: [{ name: 'model_tpm', unit: 'tokens', rate: 1000, per: 'minute' }],
    });
    const fn = async () => ({ usage: 300 });
    await drive(clock, guard.runDetailed(fn, { tokens: 600, usage: (v) => v.usage }));
    expect(events.filter((e) => e.type === 'reserve' || e.type === 'reconcile')).toEqual([
      { type: 'reserve', at: clock.now(), target: 'default', tokens: 600 },
      { type: 'reconcile', at: clock.now(), target: 'default', reserved: 600, actual: 300 },
    ]);
    await drive(clock, guard.runDetailed(fn, { tokens: 600, usage: (v) => v.usage })); // 700 left → fits
    const err = await drive(clock, guard.runDetailed(fn, { tokens: 600 })).catch((e) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err.reason).toBe('limit');
    expect(err.retryAfterMs).toBeCloseTo(((600 - 400) / 1000) * 60_000, 6);
  });

  it('returns a classified error value instead of throwing when classify says so', async () => {
    const { guard, clock } = setup();
    const r = await drive(
      clock,
      guard.runDetailed(async () => ({ status: 404 }), { classify: (v) => ({ status: v.status }) }),
    );
    expect(r).toMatchObject({ ok: false, value: { status: 404 }, attempts: 1 });
  });

  it('runs once per idempotency key and replays the receipt', async () => {
    const { guard, clock } = setup({ idempotency: { store: new MemoryIdempotencyStore() } });
    let runs = 0;
    const fn = async () => `receipt-${++runs}`;
    const a = await drive(clock, guard.runDetailed(fn, { idempotencyKey: 't1:u9:send_email:thread123:v3' }));
    const b = await drive(clock, guard.runDetailed(fn, { idempotencyKey: 't1:u9:send_email:thread123:v3' }));
    expect(runs).toBe(1);
    expect(a).toMatchObject({ value: 'receipt-1', replayed: false });
    expect(b).toMatchObject({ value: 'receipt-1', replayed: true });
  });

  it('queues behind the concurrency limit and sheds when the queue is full', async () => {
    const { guard, clock } = setup({ concurrency: { maxInFlight: 1, maxQueue: 1, maxWaitMs: 1000 } });
    let release!: () => void;
    const slow = () => new Promise<string>((r) => (release = () => r('slow')));
    const first = guard.runDetailed(slow);
    await Promise.resolve();
    const second = guard.runDetailed(async () => 'queued');
    const third = guard.runDetailed(async () => 'refused');
    await expect(third).rejects.toMatchObject({ reason: 'concurrency' });
    await new Promise((r) => setImmediate(r));
    release();
    await expect(first).resolves.toMatchObject({ value: 'slow' });
    await expect(drive(clock, second)).resolves.toMatchObject({ value: 'queued' });
  });

  it('rejects bad options naming the option', () => {
    const clock = new ManualClock();
    const random = new SeededRandom(1);
    expect(() => new Guard({ clock, random, maxAttempts: 0 })).toThrow(OptionError);
    expect(() => new Guard({ clock, random, maxAttempts: 0 })).toThrow(
      /guard.maxAttempts must be an integer from 1 to 100, got 0/,
    );
    expect(() => new Guard({ clock, random, targets: [] })).toThrow(/guard.targets/);
    expect(() => new Guard({ clock, random, throttle: { k: 0 } })).toThrow(/throttle.k/);
    expect(() => new Guard({ random } as unknown as GuardOptions)).toThrow(/guard.clock must be a Clock/);
  });
});

describe('GuardCall (the synchronous state machine the simulator drives)', () => {
  it('walks attempt → wait → attempt → done without promises', () => {
    const { guard } = setup({ backoff: { strategy: 'exponential', baseMs: 50 } });
    let now = 0;
    const call = coreOf(guard).start(now);
    expect(call.next(now)).toBe(Step.Attempt);
    expect(call.complete(classifyStatus(503), 10, -1, (now += 10))).toBe(Step.Wait);
    expect(call.delayMs).toBe(50);
    now += call.delayMs;
    expect(call.next(now)).toBe(Step.Attempt);
    expect(call.attempt).toBe(2);
    expect(call.isRetry).toBe(true);
    expect(call.complete(classifyStatus(200), 10, -1, now + 10)).toBe(Step.Done);
  });

  it('at full outage keeps retries within the budget', () => {
    const { guard } = setup({
      breaker: false,
      throttle: false,
      retryBudget: { ratio: 0.1, minRetriesPerSec: 0 },
      maxAttempts: 3,
    });
    let attempts = 0;
    let now = 0;
    for (let i = 0; i < 1000; i++) {
      const call = coreOf(guard).start(now);
      let step = call.next(now);
      while (step === Step.Attempt) {
        attempts++;
        step = call.complete(classifyStatus(503), 1, -1, now);
        if (step === Step.Wait) step = call.next(now);
      }
      now += 1;
    }
    expect(attempts).toBeLessThanOrEqual(1100);
    expect(attempts).toBeGreaterThanOrEqual(1099);
  });
});
