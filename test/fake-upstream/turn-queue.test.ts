import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/fake-upstream/turn-queue.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TurnQueue', () => {
  it('runs perTurn items at once, the rest on the turns after in order, told they waited', async () => {
    const ran: Array<[number, boolean]> = [];
    const q = new TurnQueue<number>(3, (n, waited) => ran.push([n, waited]));
    const now = [1, 2, 3, 4, 5, 6, 7].map((n) => q.push(n));
    expect(now).toEqual([true, true, true, false, false, false, false]);
    expect(ran).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(q.waiting).toBe(4);
    await nextTurn();
    expect(ran.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ran.slice(3).every(([, waited]) => waited)).toBe(true);
    await nextTurn();
    expect(ran.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(q.waiting).toBe(0);
  });

  it('under light load nothing waits: each turn starts a fresh count', async () => {
    const ran: number[] = [];
    const q = new TurnQueue<number>(2, (n) => ran.push(n));
    for (let turn = 0; turn < 4; turn++) {
      expect([q.push(turn * 2), q.push(turn * 2 + 1)]).toEqual([true, true]);
      await nextTurn();
    }
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('an item arriving while others wait queues behind them, even in a turn with room', async () => {
    const ran: string[] = [];
    const q = new TurnQueue<string>(1, (s) => ran.push(s));
    q.push('a');
    q.push('b');
    await nextTurn(); // b runs; this turn's count is 1 of 1
    expect(ran).toEqual(['a', 'b']);
    q.push('c');
    q.push('d');
    expect(ran).toEqual(['a', 'b']);
    await nextTurn();
    await nextTurn();
    expect(ran).toEqual(['a', 'b', 'c', 'd']);
  });

  it('skips what is no longer live without counting it, and clear drops what waits', async () => {
    const ran: number[] = [];
    const dead = new Set([3, 4]);
    const q = new TurnQueue<number>(
      2,
      (n) => ran.push(n),
      (n) => !dead.has(n),
    );
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) q.push(n);
    await nextTurn();
    expect(ran).toEqual([1, 2, 5, 6]);
    const dropped: number[] = [];
    q.clear((n) => dropped.push(n));
    expect(dropped).toEqual([7, 8]);
    expect(q.waiting).toBe(0);
    await nextTurn();
    expect(ran).toEqual([1, 2, 5, 6]);
  });

  it('while ready() says no, items wait (whatever the turn has room for) until kick()', async () => {
    const ran: number[] = [];
    let open = false;
    const q = new TurnQueue<number>(
      10,
      (n) => ran.push(n),
      () => true,
      () => open,
    );
    expect([q.push(1), q.push(2)]).toEqual([false, false]);
    await nextTurn();
    await nextTurn();
    expect(ran).toEqual([]);
    open = true;
    q.kick();
    await nextTurn();
    expect(ran).toEqual([1, 2]);
  });
});
