import { describe, expect, it } from 'vitest';
import { FINISH_GRACE_MS, StreamLimit, StreamWatch } from '../../src/engine/stream-watch.js';

const S = 1000;

describe('StreamWatch', () => {
  it('regression: idle does not run before the first token (firstToken 10 s, idle 1 s, first event at 3 s)', () => {
    const w = new StreamWatch({ headersMs: 10 * S, firstTokenMs: 10 * S, idleMs: 1 * S }, 0);
    w.headers();
    w.activity(0); // a role chunk: bytes, not content
    for (const t of [1 * S, 2.2 * S, 2.999 * S]) expect(w.check(t)).toBe(StreamLimit.None);
    expect(w.due()).toBe(10 * S);
    w.activity(3 * S);
    w.content(3 * S);
    expect(w.due()).toBe(4 * S);
    expect(w.check(4 * S - 1)).toBe(StreamLimit.None);
    expect(w.check(4 * S)).toBe(StreamLimit.Idle);
  });

  it('each limit fires at its own time, the earliest first, the header wait on a tie', () => {
    const cases: Array<[number, number, number, number, number]> = [
      // headers, firstToken, idle → what runs out first with nothing coming, and when
      [1 * S, 2 * S, 3 * S, StreamLimit.Headers, 1 * S],
      [2 * S, 1 * S, 3 * S, StreamLimit.FirstToken, 1 * S],
      [3 * S, 2 * S, 1 * S, StreamLimit.FirstToken, 2 * S],
      [2 * S, 2 * S, 1 * S, StreamLimit.Headers, 2 * S],
      [Infinity, Infinity, 1 * S, StreamLimit.None, Infinity],
    ];
    for (const [headersMs, firstTokenMs, idleMs, limit, at] of cases) {
      const w = new StreamWatch({ headersMs, firstTokenMs, idleMs }, 0);
      expect(w.due()).toBe(at);
      if (at !== Infinity) {
        expect(w.check(at - 1)).toBe(StreamLimit.None);
        expect(w.check(at)).toBe(limit);
      }
    }
  });

  it('after the headers, the first-token limit still runs from the start', () => {
    const w = new StreamWatch({ headersMs: 1 * S, firstTokenMs: 5 * S, idleMs: 1 * S }, 100);
    w.headers();
    expect(w.due()).toBe(5100);
    expect(w.check(5100)).toBe(StreamLimit.FirstToken);
  });

  it('idle counts only while the guard waits on the upstream, from the last bytes or the new wait', () => {
    const w = new StreamWatch({ headersMs: S, firstTokenMs: S, idleMs: 2 * S }, 0);
    w.headers();
    w.content(500);
    w.waiting(false, 600);
    expect(w.due()).toBe(Infinity);
    expect(w.check(60 * S)).toBe(StreamLimit.None);
    w.waiting(true, 60 * S);
    expect(w.due()).toBe(62 * S);
    w.activity(61 * S);
    expect(w.check(62 * S)).toBe(StreamLimit.None);
    expect(w.check(63 * S)).toBe(StreamLimit.Idle);
  });

  it('after a finish, quiet for the grace completes the stream', () => {
    const w = new StreamWatch({ headersMs: S, firstTokenMs: S, idleMs: 15 * S }, 0);
    w.headers();
    w.content(10);
    w.finish();
    w.activity(20);
    expect(w.due()).toBe(20 + FINISH_GRACE_MS);
    expect(w.check(20 + FINISH_GRACE_MS)).toBe(StreamLimit.FinishQuiet);
  });
});
