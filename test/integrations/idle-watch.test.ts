import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { IdleWatch } from '../../src/integrations/idle-watch.js';

describe('IdleWatch', () => {
  it('keeps one timer for a stream of chunks and fires only after a full gap with a read pending', () => {
    const clock = new ManualClock();
    const quiet: number[] = [];
    const w = new IdleWatch(clock, (ms) => quiet.push(clock.now(), ms));
    for (let i = 0; i < 100; i++) {
      w.watch(1000);
      clock.advance(600);
    }
    expect(clock.pending).toBe(1);
    expect(quiet).toEqual([]);
    clock.advance(400); // 1000 ms since the last chunk
    expect(quiet).toEqual([60_400, 1000]);
  });

  it('does not count time the caller holds the stream back, and a shorter gap comes sooner', () => {
    const clock = new ManualClock();
    const quiet: number[] = [];
    const w = new IdleWatch(clock, () => quiet.push(clock.now()));
    w.watch(1000);
    w.rest();
    clock.advance(5000);
    expect(quiet).toEqual([]);
    w.watch(1000);
    clock.advance(100);
    w.watch(200); // after a finish: the grace is shorter than the gap armed for
    clock.advance(200);
    expect(quiet).toEqual([5300]);
    w.watch(1000);
    w.stop();
    expect(clock.pending).toBe(0);
  });
});
