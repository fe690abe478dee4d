import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { AcceptBursts } from '../../src/fake-upstream/accept-bursts.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function bursts(turns: number, maxHoldMs = 1000) {
  const clock = new ManualClock();
  let ends = 0;
  const b = new AcceptBursts(turns, maxHoldMs, clock, () => ends++);
  return { b, clock, ends: () => ends };
}

describe('AcceptBursts', () => {
  it('holds from the turn after `turns` turns in a row accepted, until a turn accepts nothing; onEnd hears that end once', async () => {
    const { b, ends } = bursts(3);
    for (let turn = 1; turn <= 3; turn++) {
      expect(b.holding()).toBe(false);
      b.accepted();
      b.accepted(); // several accepts in one turn count as one turn
      await nextTurn();
    }
    expect(b.holding()).toBe(true);
    await nextTurn(); // nothing accepted this turn
    expect(b.holding()).toBe(false);
    expect(ends()).toBe(1);
    await nextTurn();
    expect(ends()).toBe(1);
  });

  it('a burst that never held ends without a word; one accept per turn with gaps between is no burst', async () => {
    const { b, ends } = bursts(2);
    for (let i = 0; i < 4; i++) {
      b.accepted();
      await nextTurn();
      await nextTurn(); // a turn without accepts between
      expect(b.holding()).toBe(false);
    }
    expect(ends()).toBe(0);
  });

  it('holds at most maxHoldMs from when it first held, then not again until the burst ends', async () => {
    const { b, clock } = bursts(1, 100);
    b.accepted();
    await nextTurn();
    expect(b.holding()).toBe(true);
    clock.advance(99);
    b.accepted();
    await nextTurn();
    expect(b.holding()).toBe(true);
    clock.advance(1);
    expect(b.holding()).toBe(false);
    b.accepted();
    await nextTurn();
    expect(b.holding()).toBe(false); // still the same burst: its hold is spent
    await nextTurn(); // the burst ends
    b.accepted();
    await nextTurn();
    expect(b.holding()).toBe(true); // a new burst holds again
  });

  it('0 turns never holds; after stop no turn is watched', async () => {
    const off = bursts(0);
    off.b.accepted();
    await nextTurn();
    off.b.accepted();
    await nextTurn();
    expect(off.b.holding()).toBe(false);
    const { b } = bursts(1);
    b.stop();
    b.accepted();
    await nextTurn();
    expect(b.holding()).toBe(false);
  });
});
