import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { RealTimeScheduler } from '../../src/run/real-time-scheduler.js';

function setup(start = 1000) {
  const clock = new ManualClock(start);
  const errors: unknown[] = [];
  const s = new RealTimeScheduler({ clock, onError: (e) => errors.push(e) });
  const log: Array<[string, number, number, number]> = [];
  const handler = (name: string) => ({
    handle: (kind: number, id: number, now: number) => void log.push([name, kind, id, now]),
  });
  return { clock, s, log, errors, handler };
}

describe('RealTimeScheduler on a manual clock', () => {
  it('reads ms since it was made, and fires events in time order, ties in scheduling order', () => {
    const { clock, s, log, handler } = setup();
    const a = s.register(handler('a'));
    const b = s.register(handler('b'));
    expect(s.now()).toBe(0);
    s.schedule(30, a, 1, 1);
    s.schedule(10, b, 2, 2);
    s.schedule(30, b, 3, 3);
    s.schedule(10, a, 4, 4);
    s.schedule(20, a, 5, 5);
    clock.advance(100);
    expect(log.map(([name, kind]) => `${name}${kind}`)).toEqual(['b2', 'a4', 'a5', 'a1', 'b3']);
    expect(log.map(([, , , now]) => now)).toEqual([10, 10, 20, 30, 30]);
    expect(s.pending).toBe(0);
  });

  it('hands a handler at least the event time, and its clock never goes back', () => {
    const { clock, s, log, handler } = setup();
    const h = s.register(handler('h'));
    s.schedule(4, h, 0, 0);
    s.schedule(5, h, 0, 1);
    // The timer fires at 4; the event due at 5 is within the 1 ms a real timer may be early by,
    // so it fires in the same pass, handed its own time.
    clock.advance(4);
    expect(log).toEqual([
      ['h', 0, 0, 4],
      ['h', 0, 1, 5],
    ]);
    expect(s.now()).toBe(5);
    clock.advance(10);
    expect(s.now()).toBe(14);
  });

  it('fires events scheduled by a handler for the same moment in the same pass', () => {
    const { clock, s, log } = setup();
    let h = 0;
    h = s.register({
      handle: (kind, id, now) => {
        log.push(['h', kind, id, now]);
        if (kind === 0) s.schedule(now, h, 1, id);
      },
    });
    s.schedule(3, h, 0, 9);
    clock.advance(3);
    expect(log).toEqual([
      ['h', 0, 9, 3],
      ['h', 1, 9, 3],
    ]);
  });

  it('keeps one timer, re-armed only for an earlier event', () => {
    const { clock, s, handler } = setup();
    const h = s.register(handler('h'));
    for (let i = 0; i < 100; i++) s.schedule(50 + i, h, 0, i);
    expect(clock.pending).toBe(1);
    s.schedule(10, h, 0, 0);
    expect(clock.pending).toBe(1);
    expect(clock.nextTimerAt()).toBe(1010);
  });

  it('reports what a handler throws and goes on with the events behind it', () => {
    const { clock, s, log, errors, handler } = setup();
    const bad = s.register({
      handle: () => {
        throw new Error('boom');
      },
    });
    const good = s.register(handler('good'));
    s.schedule(1, bad, 0, 0);
    s.schedule(1, good, 0, 0);
    clock.advance(1);
    expect(errors).toHaveLength(1);
    expect(log).toHaveLength(1);
  });

  it('forgets a retired handler once its pending events have fired', () => {
    const { clock, s, log, handler } = setup();
    const old = s.register(handler('old'));
    s.schedule(5, old, 0, 0);
    s.retire(old);
    clock.advance(5);
    expect(log).toEqual([['old', 0, 0, 5]]);
    s.schedule(10, old, 0, 1);
    clock.advance(10);
    expect(log).toHaveLength(1);
  });

  it('drops everything on stop', () => {
    const { clock, s, log, handler } = setup();
    const h = s.register(handler('h'));
    s.schedule(5, h, 0, 0);
    s.stop();
    s.schedule(6, h, 0, 1);
    expect(clock.pending).toBe(0);
    clock.advance(10);
    expect(log).toEqual([]);
  });

  it('a burst of events due at once is fired in passes of about 8 ms, the rest on a 0 ms timer, in order', () => {
    // A clock each event costs 1 ms of: a burst of 100 such answers would hold the loop 100 ms.
    let t = 0;
    const timers: Array<{ ms: number; fn: () => void }> = [];
    const clock = {
      now: () => t,
      setTimer(ms: number, fn: () => void) {
        const timer = { ms, fn };
        timers.push(timer);
        return () => void timers.splice(timers.indexOf(timer), 1);
      },
    };
    const s = new RealTimeScheduler({ clock, onError: () => {} });
    const fired: number[] = [];
    const h = s.register({ handle: (_k, id) => void (fired.push(id), t++) });
    for (let i = 0; i < 100; i++) s.schedule(0, h, 0, i);
    const passes: number[] = [];
    while (timers.length > 0) {
      const timer = timers.shift()!;
      const before = fired.length;
      timer.fn();
      passes.push(fired.length - before);
    }
    expect(fired).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Each pass stops at the first budget check past 8 ms (every 16 events): 16 events per pass.
    expect(passes.length).toBeGreaterThan(5);
    expect(Math.max(...passes)).toBeLessThanOrEqual(16);
  });

  it('keeps real time in a closed loop: an event scheduled for now after a pass is told now, not the pass horizon', () => {
    // A closed-loop user whose answer comes 0.1 ms after its request went out, 1,000 times, with
    // a far event pending (a once-a-second sample): a pass looks 1 ms ahead, and each request
    // must still be stamped with the clock's time, not up to 1 ms later per pass.
    let t = 0;
    const timers: Array<() => void> = [];
    const clock = {
      now: () => t,
      setTimer(_ms: number, fn: () => void) {
        timers.push(fn);
        return () => void timers.splice(timers.indexOf(fn), 1);
      },
    };
    const s = new RealTimeScheduler({ clock, onError: () => {} });
    const told: number[] = [];
    const h = s.register({ handle: (_k, _id, now) => void told.push(now) });
    s.schedule(1000, h, 1, 0);
    for (let i = 0; i < 1000; i++) {
      s.schedule(s.now(), h, 0, i); // the answer's callback starts the next request
      timers.shift()!(); // the pass (setImmediate on the real clock)
      t += 0.1;
    }
    expect(told).toHaveLength(1000);
    expect(told[999]).toBeCloseTo(99.9, 6);
    expect(s.now()).toBeCloseTo(100, 6);
  });
});

/** A scheduler and a handler that logs (kind, id, now) and resolves `seen(n)` after n events. */
function realSetup(onError?: (err: unknown) => void) {
  const s = new RealTimeScheduler(onError === undefined ? {} : { onError });
  const log: Array<[number, number, number]> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const h = s.register({
    handle(kind, id, now) {
      log.push([kind, id, now]);
      if (kind === 9) throw new Error('boom');
      for (const w of waiters) if (log.length >= w.n) w.resolve();
    },
  });
  const seen = (n: number) =>
    new Promise<void>((resolve) => (log.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { s, h, log, seen };
}

describe('RealTimeScheduler on the real clock', () => {
  it('fires events in time order, ties in the order scheduled, each no earlier than due', async () => {
    const { s, h, log, seen } = realSetup();
    const t0 = s.now();
    s.schedule(t0 + 30, h, 1, 3);
    s.schedule(t0 + 10, h, 1, 1);
    s.schedule(t0 + 10, h, 1, 2);
    s.schedule(t0 + 0, h, 1, 0);
    await seen(4);
    expect(log.map((e) => e[1])).toEqual([0, 1, 2, 3]);
    for (const [, id, now] of log) expect(now).toBeGreaterThanOrEqual(t0 + [0, 10, 10, 30][id] - 1);
    // Handed times never go back, and now() never reads below them.
    const times = log.map((e) => e[2]);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(s.now()).toBeGreaterThanOrEqual(times[3]);
    expect(s.pending).toBe(0);
  });

  it('an event scheduled from a handler for now fires in the same pass; afterFire runs after each pass', async () => {
    const s = new RealTimeScheduler();
    const order: string[] = [];
    let h = -1;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    h = s.register({
      handle(kind, _id, now) {
        order.push(`e${kind}`);
        if (kind === 1) s.schedule(now, h, 2, 0);
        if (kind === 2) s.schedule(now + 5, h, 3, 0);
      },
    });
    s.afterFire = () => {
      order.push('after');
      if (order.includes('e3')) done();
    };
    s.schedule(0, h, 1, 0);
    await finished;
    // (A timer can fire a little early, before e3 is due: an empty pass, another `after`.)
    expect(order.filter((e, i) => e !== 'after' || order[i - 1] !== 'after')).toEqual([
      'e1',
      'e2',
      'after',
      'e3',
      'after',
    ]);
  });

  it('restart() makes time 0 now; stop() drops what is pending and ignores later events', async () => {
    let t = 1_000;
    const s = new RealTimeScheduler({ clock: { now: () => t, setTimer: () => () => {} } });
    t = 1_500;
    expect(s.now()).toBe(500);
    s.restart();
    expect(s.now()).toBe(0);
    t = 1_400; // a clock that went back: now() holds
    expect(s.now()).toBe(0);
    const fired: number[] = [];
    const h = s.register({ handle: (k) => void fired.push(k) });
    s.schedule(1e9, h, 1, 0);
    s.stop();
    s.schedule(0, h, 2, 0);
    await new Promise((r) => setImmediate(r));
    expect(fired).toEqual([]);
  });

  it('what a handler throws goes to onError, and the pass goes on', async () => {
    const errors: unknown[] = [];
    const { s, h, log, seen } = realSetup((e) => errors.push(e));
    s.schedule(0, h, 9, 0);
    s.schedule(0, h, 1, 1);
    await seen(2);
    expect(log.map((e) => e[0])).toEqual([9, 1]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('boom');
  });
});
