import { describe, expect, it } from 'vitest';
import { RealScheduler } from '../../../src/run/live/real-scheduler.js';

/** A scheduler and a handler that logs (kind, id, now) and resolves `seen(n)` after n events. */
function setup(onError?: (err: unknown) => void) {
  const s = new RealScheduler(onError);
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

describe('RealScheduler', () => {
  it('fires events in time order, ties in the order scheduled, each no earlier than due', async () => {
    const { s, h, log, seen } = setup();
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
    const s = new RealScheduler();
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
    const s = new RealScheduler(undefined, () => t);
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
    const { s, h, log, seen } = setup((e) => errors.push(e));
    s.schedule(0, h, 9, 0);
    s.schedule(0, h, 1, 1);
    await seen(2);
    expect(log.map((e) => e[0])).toEqual([9, 1]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('boom');
  });
});
