import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/engine/clock.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';

describe('ManualClock', () => {
  it('fires timers in time order, ties in the order they were set', () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push(`b@${clock.now()}`));
    clock.setTimer(10, () => fired.push(`a@${clock.now()}`));
    clock.setTimer(20, () => fired.push(`c@${clock.now()}`));
    const cancel = clock.setTimer(15, () => fired.push('cancelled'));
    cancel();
    clock.advance(25);
    expect(fired).toEqual(['a@10', 'b@20', 'c@20']);
    expect(clock.now()).toBe(25);
  });

  it('sleep resolves on advance and rejects on abort', async () => {
    const clock = new ManualClock();
    let done = false;
    const p = sleep(clock, 100).then(() => (done = true));
    clock.advance(99);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await p;
    expect(done).toBe(true);
    const ac = new AbortController();
    const q = sleep(clock, 100, ac.signal);
    ac.abort(new Error('stop'));
    await expect(q).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });
});

describe('SeededRandom', () => {
  it('repeats for a seed, differs across seeds and split labels', () => {
    const a = new SeededRandom(7);
    const b = new SeededRandom(7);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(new SeededRandom(8).next()).not.toBe(xs[0]);
    expect(new SeededRandom(7).split('upstream').next()).not.toBe(new SeededRandom(7).split('traffic').next());
    expect(new SeededRandom(7).split('x').next()).toBe(new SeededRandom(7).split('x').next());
  });

  it('is roughly uniform in [0, 1)', () => {
    const r = new SeededRandom('uniform');
    const bins = new Array(10).fill(0);
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const x = r.next();
      if (!(x >= 0 && x < 1)) outside++;
      bins[Math.floor(x * 10)]++;
    }
    expect(outside).toBe(0);
    for (const n of bins) expect(Math.abs(n - 10_000)).toBeLessThan(400);
  });
});
