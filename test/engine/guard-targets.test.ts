import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../src/engine/classify.js';
import { sleep } from '../../src/engine/clock.js';
import { OptionError, ShedError, StreamError } from '../../src/engine/errors.js';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { coreOf, Guard, type AttemptContext } from '../../src/engine/guard.js';
import type { GuardOptions } from '../../src/engine/guard-options.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { drive } from '../helpers/drive.js';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly error?: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

function setup(options: Partial<GuardOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const events: GuardEvent[] = [];
  const guard = new Guard({ clock, random: new SeededRandom(7), onEvent: (e) => events.push(e), ...options });
  return { clock, guard, events };
}

const API = 'https://api.example.com';
const MODELS = [
  { name: '4o', origin: API, model: 'gpt-4o' },
  { name: 'mini', origin: API, model: 'gpt-4o-mini' },
];

describe('model targets', () => {
  it('hands the attempt its target and says which one answered', async () => {
    const { guard, clock } = setup({ targets: MODELS, maxAttempts: 1 });
    const seen: Array<{ name: string; model?: string; origin?: string }> = [];
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => {
        seen.push({ name: ctx.target.name, model: ctx.target.model, origin: ctx.target.origin });
        if (ctx.target.model === 'gpt-4o') throw new HttpError(503);
        return `answer of ${ctx.target.model}`;
      }),
    );
    expect(seen).toEqual([
      { name: '4o', model: 'gpt-4o', origin: API },
      { name: 'mini', model: 'gpt-4o-mini', origin: API },
    ]);
    expect(r).toMatchObject({ value: 'answer of gpt-4o-mini', degraded: true, target: 'mini', attempts: 2 });
    expect(r.answeredBy).toMatchObject({ name: 'mini', index: 1, model: 'gpt-4o-mini', origin: API });
  });

  it('keeps bare string targets working, as names', async () => {
    const { guard, clock } = setup({ targets: ['a', 'b'] });
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => `${ctx.targetName}/${ctx.target.name}/${ctx.target.model}`),
    );
    expect(r).toMatchObject({ value: 'a/a/undefined', target: 'a', degraded: false });
    expect(r.answeredBy).toMatchObject({ key: 'a', origin: undefined });
  });

  it('refuses bad targets naming the option', () => {
    const clock = new ManualClock(0);
    const random = new SeededRandom(1);
    const bad = (targets: unknown, option: string) => {
      const err = (() => {
        try {
          new Guard({ clock, random, targets: targets as never });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).option).toBe(option);
    };
    bad([], 'guard.targets');
    bad([{ name: '' }], 'guard.targets[0].name');
    bad(['a', { name: 'a', model: 'm' }], 'guard.targets');
    bad([{ name: 'a', contextWindow: 0 }], 'guard.targets[0].contextWindow');
    bad([{ name: 'a', model: 5 }], 'guard.targets[0].model');
    bad([{ name: 'a', rewrite: 'x' }], 'guard.targets[0].rewrite');
    bad([{ name: 'a', stream: 5 }], 'guard.targets[0].stream');
    bad([{ name: 'a', stream: { firstTokenMs: 0 } }], 'guard.targets[0].stream.firstTokenMs');
    bad([{ name: 'a', stream: { idle: 5 } }], 'guard.targets[0].stream.idle');
  });

  it('a target’s own stream limits are kept, checked and frozen (undefined when it sets none)', () => {
    const guard = new Guard({
      clock: new ManualClock(0),
      random: new SeededRandom(1),
      targets: [{ name: 'reasoning', stream: { firstTokenMs: 120_000, idleMs: Infinity } }, 'chat'],
    });
    const [reasoning, chat] = guard.targets;
    expect(reasoning.stream).toEqual({ firstTokenMs: 120_000, idleMs: Infinity });
    expect(Object.isFrozen(reasoning.stream)).toBe(true);
    expect(chat.stream).toBeUndefined();
  });
});

describe('state per target (origin + model)', () => {
  it('a failing model never sheds calls to another model on the same origin', async () => {
    const { guard, clock, events } = setup({
      targets: MODELS,
      breaker: { minimumCalls: 5 },
      throttle: { minRequests: 5 },
      backoff: { strategy: 'exponential', baseMs: 1, capMs: 1 },
    });
    const fn = async (ctx: AttemptContext) => {
      await sleep(clock, 50);
      if (ctx.target.model === 'gpt-4o') throw new HttpError(503);
      return ctx.target.model;
    };
    // Calls that start on the failing model, and calls that ask for the healthy one only.
    const miniOnly = new Guard({
      clock,
      random: new SeededRandom(8),
      targets: [MODELS[1]],
    });
    for (let i = 0; i < 40; i++) {
      const r = await drive(clock, guard.runDetailed(fn));
      expect(r.target).toBe('mini');
      clock.advance(500);
    }
    const snap = guard.snapshot(clock.now());
    expect(snap.targets[0].breaker!.state).not.toBe('closed');
    expect(snap.targets[1].breaker).toMatchObject({ state: 'closed', failures: 0 });
    expect(snap.targets[1].throttle!.dropProbability).toBe(0);
    expect(events.some((e) => e.type === 'shed' && e.target === 'mini')).toBe(false);
    expect(events.some((e) => e.type === 'trip' && e.target === 'mini')).toBe(false);
    // A guard whose only target is the healthy model is untouched by the other's failures.
    await expect(drive(clock, miniOnly.run(fn))).resolves.toBe('gpt-4o-mini');
  });

  it('property: whatever the first model answers, the second is never shed and its state stays healthy', async () => {
    const answer = fc.constantFrom<number | 'timeout'>(200, 429, 500, 503, 529, 'timeout');
    await fc.assert(
      fc.asyncProperty(
        fc.array(answer, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 99 }),
        async (plan, seed) => {
          const clock = new ManualClock(0);
          const events: GuardEvent[] = [];
          const guard = new Guard({
            clock,
            random: new SeededRandom(seed),
            targets: MODELS,
            attemptTimeoutMs: 1_000,
            breaker: { minimumCalls: 3 },
            throttle: { minRequests: 3 },
            onEvent: (e) => events.push(e),
          });
          let i = 0;
          const fn = (ctx: AttemptContext) =>
            new Promise<string>((resolve, reject) => {
              if (ctx.target.model === 'gpt-4o-mini') return resolve('mini');
              const a = plan[i++ % plan.length];
              if (a === 'timeout') return ctx.signal!.addEventListener('abort', () => reject(ctx.signal!.reason));
              if (a === 200) return resolve('4o');
              reject(new HttpError(a));
            });
          for (let n = 0; n < plan.length; n++) {
            await expect(drive(clock, guard.run(fn))).resolves.toMatch(/^(4o|mini)$/);
            clock.advance(250);
          }
          const mini = guard.snapshot(clock.now()).targets[1];
          expect(mini.breaker!.state).toBe('closed');
          expect(mini.breaker!.failures).toBe(0);
          expect(mini.throttle!.dropProbability).toBe(0);
          expect(events.some((e) => e.type === 'shed')).toBe(false);
        },
      ),
      { seed: 5, numRuns: 40 },
    );
  });

  it('targets naming the same origin and model share one breaker and throttle', () => {
    const { guard } = setup({
      targets: [
        { name: 'a', origin: API, model: 'm' },
        { name: 'b', origin: API, model: 'm' },
        { name: 'c', origin: API, model: 'n' },
      ],
    });
    const core = coreOf(guard);
    expect(core.breakers![0]).toBe(core.breakers![1]);
    expect(core.throttles![0]).toBe(core.throttles![1]);
    expect(core.breakers![2]).not.toBe(core.breakers![0]);
    expect(guard.targets.map((t) => t.key)).toEqual([`${API}|m`, `${API}|m`, `${API}|n`]);
  });

  it('a per-request breakerKey gets a breaker of its own on the target', async () => {
    const { guard, clock } = setup({ maxAttempts: 1, throttle: false, breaker: { minimumCalls: 3 } });
    const fail = async () => {
      throw new HttpError(500);
    };
    for (let i = 0; i < 3; i++) await drive(clock, guard.run(fail, { breakerKey: 'tool-a' })).catch(() => {});
    const shed = await drive(clock, guard.run(fail, { breakerKey: 'tool-a' })).catch((e) => e);
    expect(shed).toBeInstanceOf(ShedError);
    expect(shed.reason).toBe('breaker');
    // Other keys, and calls without one, still go.
    await expect(
      drive(
        clock,
        guard.run(async () => 'b', { breakerKey: 'tool-b' }),
      ),
    ).resolves.toBe('b');
    await expect(
      drive(
        clock,
        guard.run(async () => 'plain'),
      ),
    ).resolves.toBe('plain');
  });
});

describe('context length and content filter', () => {
  const tooLong = () =>
    new HttpError(400, { code: 'context_length_exceeded', message: 'maximum context length is 8192' });

  it('moves a context-length error to the next target with a larger window, skipping smaller ones', async () => {
    const { guard, clock } = setup({
      targets: [
        { name: 'small', model: 's', contextWindow: 8_000 },
        { name: 'tiny', model: 't', contextWindow: 4_000 },
        { name: 'same', model: 'u', contextWindow: 8_000 },
        { name: 'large', model: 'l', contextWindow: 128_000 },
      ],
    });
    const tried: string[] = [];
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => {
        tried.push(ctx.targetName);
        if (ctx.targetName !== 'large') throw tooLong();
        return 'fits';
      }),
    );
    expect(tried).toEqual(['small', 'large']);
    expect(r).toMatchObject({ value: 'fits', target: 'large', degraded: true });
  });

  it('fails with the provider’s error when no target has a larger window', async () => {
    const { guard, clock } = setup({
      targets: [
        { name: 'big', model: 'b', contextWindow: 200_000 },
        { name: 'small', model: 's', contextWindow: 8_000 },
      ],
    });
    const err = await drive(
      clock,
      guard.run(async () => {
        throw tooLong();
      }),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(400);
  });

  it('does not retry or fail over a content-filter refusal by default; the caller gets the reason', async () => {
    const { guard, clock, events } = setup({ targets: ['a', 'b'] });
    const body = { code: 'content_filter', message: 'filtered by the content management policy' };
    let n = 0;
    const err = await drive(
      clock,
      guard.run(async () => {
        n++;
        throw new HttpError(400, body);
      }),
    ).catch((e) => e);
    expect(n).toBe(1);
    expect(err.error).toEqual(body);
    expect(events.some((e) => e.type === 'fallback' || e.type === 'retry')).toBe(false);
    // Through `classify`, the value comes back with ok: false and the reason on the call.
    const r = await drive(
      clock,
      guard.runDetailed(async () => ({ status: 400, body: { error: body } }), { classify: (v) => v }),
    );
    expect(r).toMatchObject({ ok: false, target: 'a', attempts: 1 });
  });

  it('takes a 200 whose model refused (finish_reason content_filter, stop_reason refusal) as a content filter', async () => {
    const refusals = [
      { status: 200, body: { choices: [{ index: 0, message: { content: null }, finish_reason: 'content_filter' }] } },
      { status: 200, body: { type: 'message', content: [], stop_reason: 'refusal' } },
    ];
    for (const refusal of refusals) {
      const { guard, clock, events } = setup({ targets: ['a', 'b'] });
      let n = 0;
      const r = await drive(
        clock,
        guard.runDetailed(
          async () => {
            n++;
            return refusal;
          },
          { classify: (v) => v },
        ),
      );
      expect(n).toBe(1);
      expect(r).toMatchObject({ ok: false, target: 'a', attempts: 1, value: refusal });
      expect(events.some((e) => e.type === 'fallback' || e.type === 'retry')).toBe(false);
      // Not the upstream's fault: the breaker records a success.
      expect(guard.snapshot(clock.now()).targets[0].breaker!.failures).toBe(0);
    }
    const { guard, clock } = setup({ targets: ['a', 'b'], onContentFilter: 'fallback' });
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => (ctx.targetName === 'a' ? refusals[1] : { status: 200, body: 'yes' }), {
        classify: (v) => v,
      }),
    );
    expect(r).toMatchObject({ ok: true, target: 'b', attempts: 2 });
  });

  it("fails a content-filter refusal over with onContentFilter: 'fallback'", async () => {
    const { guard, clock } = setup({ targets: ['a', 'b'], onContentFilter: 'fallback' });
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => {
        if (ctx.targetName === 'a') throw new HttpError(400, { code: 'content_filter', message: 'no' });
        return 'b says yes';
      }),
    );
    expect(r).toMatchObject({ value: 'b says yes', target: 'b', attempts: 2 });
  });
});

describe('onTimeout', () => {
  const silentPrimary = (clock: ManualClock, tried: string[]) => (ctx: AttemptContext) =>
    new Promise<string>((resolve, reject) => {
      tried.push(ctx.targetName);
      if (ctx.targetName === 'fallback') return void sleep(clock, 100).then(() => resolve('from fallback'));
      ctx.signal!.addEventListener('abort', () => reject(ctx.signal!.reason));
    });

  it("defaults to 'fallback': a timed-out attempt moves to the next target at once", async () => {
    const { guard, clock } = setup({ targets: ['primary', 'fallback'], attemptTimeoutMs: 30_000 });
    const tried: string[] = [];
    const start = clock.now();
    const r = await drive(clock, guard.runDetailed(silentPrimary(clock, tried)));
    expect(tried).toEqual(['primary', 'fallback']);
    expect(r).toMatchObject({ value: 'from fallback', degraded: true });
    expect(clock.now() - start).toBe(30_100);
  });

  it("'retry' retries the silent target first, as before", async () => {
    const { guard, clock } = setup({
      targets: ['primary', 'fallback'],
      attemptTimeoutMs: 30_000,
      onTimeout: 'retry',
      backoff: { strategy: 'exponential', baseMs: 1, capMs: 1 },
    });
    const tried: string[] = [];
    await drive(clock, guard.runDetailed(silentPrimary(clock, tried)));
    expect(tried).toEqual(['primary', 'primary', 'primary', 'fallback']);
  });

  it('a stream stall fails over like a timeout; a cut stream is retried on its target', async () => {
    const { guard, clock } = setup({
      targets: ['primary', 'fallback'],
      backoff: { strategy: 'exponential', baseMs: 1 },
    });
    const tried: string[] = [];
    let cuts = 1;
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => {
        tried.push(ctx.targetName);
        if (ctx.targetName === 'primary' && cuts-- > 0) throw new StreamError('stream_cut', 'cut after 40 events');
        if (ctx.targetName === 'primary') throw new StreamError('stream_stall', 'no first token in 20000 ms');
        return 'streamed by fallback';
      }),
    );
    expect(tried).toEqual(['primary', 'primary', 'fallback']);
    expect(r.target).toBe('fallback');
  });
});

describe('deferred outcomes (a stream committed before it ends)', () => {
  it('ends the call at commit and counts a break after commit against the target', async () => {
    const { guard, clock, events } = setup({ maxAttempts: 1 });
    let handle!: ReturnType<AttemptContext['defer']>;
    const r = await drive(
      clock,
      guard.runDetailed(async (ctx) => {
        handle = ctx.defer();
        return 'first token';
      }),
    );
    expect(r).toMatchObject({ value: 'first token', ok: true });
    const before = guard.snapshot(clock.now()).targets[0];
    expect(before.breaker).toMatchObject({ calls: 0 });
    expect(before.throttle).toMatchObject({ inFlight: 1 });
    clock.advance(5_000);
    expect(handle.settle('stream_cut')).toMatchObject({ class: 'stream_cut', breaker: 'failure' });
    const after = guard.snapshot(clock.now()).targets[0];
    expect(after.breaker).toMatchObject({ calls: 1, failures: 1 });
    expect(after.throttle).toMatchObject({ inFlight: 0, accepts: 0 });
    expect(events.at(-1)).toEqual({ type: 'settle', at: clock.now(), target: 'default', class: 'stream_cut' });
    // once only
    expect(handle.settle('success')).toBeUndefined();
    expect(guard.snapshot(clock.now()).targets[0].breaker).toMatchObject({ calls: 1, failures: 1 });
  });

  it('records an attempt that deferred and then failed at once; its handle does nothing', async () => {
    const { guard, clock } = setup({ maxAttempts: 1 });
    let handle!: ReturnType<AttemptContext['defer']>;
    await drive(
      clock,
      guard.run(async (ctx) => {
        handle = ctx.defer();
        throw new StreamError('stream_cut', 'cut before the first token');
      }),
    ).catch(() => {});
    expect(guard.snapshot(clock.now()).targets[0].breaker).toMatchObject({ calls: 1, failures: 1 });
    expect(handle.settled).toBe(true);
    expect(handle.settle('success')).toBeUndefined();
  });

  it('keeps a settle that comes before the attempt returns, and applies it then', async () => {
    const { guard, clock } = setup();
    await drive(
      clock,
      guard.run(async (ctx) => {
        const d = ctx.defer();
        d.settle('success');
        return 'whole stream';
      }),
    );
    expect(guard.snapshot(clock.now()).targets[0]).toMatchObject({
      breaker: { calls: 1, failures: 0 },
      throttle: { inFlight: 0, accepts: 1 },
    });
  });

  it('keeps its concurrency slot until settled', async () => {
    const { guard, clock } = setup({ concurrency: { maxInFlight: 1, maxQueue: 4, maxWaitMs: 60_000 } });
    let handle!: ReturnType<AttemptContext['defer']>;
    await drive(
      clock,
      guard.run(async (ctx) => {
        handle = ctx.defer();
        return 'streaming';
      }),
    );
    let second = false;
    const next = guard.run(async () => {
      second = true;
      return 'second';
    });
    await drive(clock, Promise.resolve());
    expect(second).toBe(false); // queued behind the stream still in flight
    handle.settle('success');
    await expect(drive(clock, next)).resolves.toBe('second');
  });

  it('works on the simulator’s synchronous path (start / next / defer / complete / settle)', () => {
    const { guard, clock } = setup({ maxAttempts: 1 });
    const call = coreOf(guard).start(clock.now());
    expect(call.next(clock.now())).toBe(1);
    const d = call.defer();
    expect(call.complete(classifyStatus(200), 10, -1, clock.now())).toBe(3);
    expect(d.settle('stream_stall')).toMatchObject({ class: 'stream_stall' });
    expect(guard.snapshot(clock.now()).targets[0].breaker).toMatchObject({ calls: 1, failures: 1 });
  });

  it('property: however attempts end and settle, every throttle slot and breaker ticket is returned once', async () => {
    const outcome = fc.constantFrom('success', 'stream_cut', 'stream_stall', 'throw', 'throw-after-defer');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ outcome, defer: fc.boolean(), settleLate: fc.boolean() }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (plan) => {
          const { guard, clock } = setup({
            maxAttempts: 1,
            breaker: { minimumCalls: 1000 },
            throttle: { minRequests: 1000 },
          });
          const late: Array<() => void> = [];
          let answered = 0;
          for (const p of plan) {
            await drive(
              clock,
              guard.run(async (ctx) => {
                if (p.outcome === 'throw') throw new HttpError(503);
                const d = p.defer ? ctx.defer() : undefined;
                if (p.outcome === 'throw-after-defer') throw new HttpError(503);
                const end = p.outcome === 'success' ? 'success' : p.outcome;
                if (d !== undefined && p.settleLate) late.push(() => void d.settle(end));
                else if (d !== undefined) d.settle(end);
                return 'v';
              }),
            )
              .then(() => answered++)
              .catch(() => answered++);
          }
          for (const f of late) f();
          const t = guard.snapshot(clock.now()).targets[0];
          expect(answered).toBe(plan.length);
          expect(t.throttle!.inFlight).toBe(0);
          expect(t.breaker!.calls).toBe(plan.length);
        },
      ),
      { seed: 11, numRuns: 60 },
    );
  });
});

describe('stream_malformed', () => {
  it('is an event, not a failure', async () => {
    const { guard, clock, events } = setup();
    await drive(
      clock,
      guard.run(async (ctx) => {
        ctx.malformed();
        ctx.malformed();
        return 'ok';
      }),
    );
    expect(events.filter((e) => e.type === 'stream_malformed')).toHaveLength(2);
    expect(guard.snapshot(clock.now()).targets[0].breaker).toMatchObject({ calls: 1, failures: 0 });
  });
});
