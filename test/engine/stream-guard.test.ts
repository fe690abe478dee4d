import { describe, expect, it } from 'vitest';
import { classify } from '../../src/engine/classify.js';
import {
  EventFlag,
  STREAM_DECISION_NAMES,
  StreamDecision,
  StreamGuard,
  type StreamGuardSetup,
} from '../../src/engine/stream-guard.js';
import { ORDERINGS, type Ordering } from '../stream-orderings.js';

const S = 1000;
const WAITS = { headersMs: 10 * S, firstTokenMs: 20 * S, idleMs: 15 * S };
const name = (d: number) => STREAM_DECISION_NAMES[d];

/** Plays an ordering's script into a guard, firing its timer whenever it is due first; the final decision and when. */
function play(o: Ordering): { decision: string; error?: string; at: number } {
  const g = new StreamGuard({ waits: o.waits, commit: o.commit }, 0);
  const script: Array<[number, () => number]> = [];
  if (o.headersAt !== undefined)
    script.push([
      o.headersAt,
      () => {
        g.headers();
        g.bytes(o.headersAt!);
        g.event(0, o.headersAt!); // a role chunk: no content
        return g.endOfChunk();
      },
    ]);
  if (o.firstAt !== undefined)
    script.push([
      o.firstAt,
      () => {
        g.headers();
        g.bytes(o.firstAt!);
        g.event(EventFlag.Content, o.firstAt!);
        return g.endOfChunk();
      },
    ]);
  if (o.endAt !== undefined)
    script.push([
      o.endAt,
      () => {
        g.bytes(o.endAt!);
        g.event(EventFlag.Finish, o.endAt!);
        return g.event(EventFlag.Terminal, o.endAt!);
      },
    ]);
  if (o.cutAt !== undefined) script.push([o.cutAt, () => g.close()]);
  script.sort((a, b) => a[0] - b[0]);
  for (;;) {
    const next = script[0];
    const due = g.due();
    if (next !== undefined && next[0] < due) {
      script.shift();
      next[1]();
    } else {
      if (due === Infinity) throw new Error('nothing more happens');
      g.timer(due - 1);
      expect(g.over).toBe(false);
      g.timer(due);
      if (!g.over) continue;
    }
    if (g.over) {
      const at = next !== undefined && next[0] < due ? next[0] : due;
      const error = g.error === undefined ? undefined : classify({ error: g.error, cancelled: false }).class;
      return { decision: name(g.outcome), ...(error === undefined ? {} : { error }), at };
    }
  }
}

describe('StreamGuard: one state machine, commit policy included', () => {
  it.each(ORDERINGS)('$name', (o) => {
    expect(play(o)).toEqual(o.verdict);
  });

  it('holds everything before the first content delta, commits at the end of the read that brings it', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    g.headers();
    expect(name(g.event(0, 10))).toBe('Hold'); // role chunk
    expect(name(g.endOfChunk())).toBe('Hold');
    expect(name(g.event(EventFlag.Content, 20))).toBe('Hold');
    expect(g.committed).toBe(false);
    expect(name(g.endOfChunk())).toBe('Commit');
    expect(g.committed).toBe(true);
    expect(name(g.event(EventFlag.Content, 30))).toBe('Deliver');
    expect(name(g.endOfChunk())).toBe('Deliver');
    expect(name(g.event(EventFlag.Finish, 40))).toBe('Deliver');
    expect(name(g.event(EventFlag.Terminal, 40))).toBe('Complete');
    expect(g.over).toBe(true);
    expect(g.committed).toBe(true);
    expect(name(g.event(EventFlag.Content, 50))).toBe('Hold'); // nothing after the end
  });

  it('commit complete: held to the end, then Complete (the caller gets it whole)', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'complete' }, 0);
    g.headers();
    g.event(EventFlag.Content, 1);
    expect(name(g.endOfChunk())).toBe('Hold');
    expect(g.committed).toBe(false);
    expect(name(g.event(EventFlag.Finish | EventFlag.Terminal, 2))).toBe('Complete');
    expect(g.committed).toBe(true);
  });

  it('a finish then a clean close without the end marker is complete, not a cut', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    g.event(EventFlag.Content, 1);
    g.endOfChunk();
    g.event(EventFlag.Finish, 2);
    expect(name(g.close())).toBe('Complete');
  });

  it('quiet after a finish completes the stream at the grace (1 s, or idleMs if shorter)', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    g.event(EventFlag.Content, 1);
    g.endOfChunk();
    g.bytes(2);
    g.event(EventFlag.Finish, 2);
    expect(g.due()).toBe(1002);
    expect(name(g.timer(1002))).toBe('Complete');
  });

  it('a refusal whole in one read is Refused (the attempt’s answer), not committed', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    g.event(EventFlag.Content, 1);
    g.event(EventFlag.Finish | EventFlag.Refusal, 1);
    expect(name(g.event(EventFlag.Terminal, 1))).toBe('Refused');
    expect(g.committed).toBe(false);
    expect(g.refusal).toBe(true);
  });

  it('a refusal after commit completes the caller’s stream', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    g.event(EventFlag.Content, 1);
    g.endOfChunk();
    g.event(EventFlag.Finish | EventFlag.Refusal, 2);
    expect(name(g.event(EventFlag.Terminal, 2))).toBe('Complete');
  });

  it('a provider error event: Retry before commit (classified by its body), EndWithError after', () => {
    const before = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    expect(name(before.event(EventFlag.Error, 1))).toBe('Retry');
    expect(before.upstreamError).toBe(true);
    const after = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    after.event(EventFlag.Content, 1);
    after.endOfChunk();
    expect(name(after.event(EventFlag.Error, 2))).toBe('EndWithError');
  });

  it('malformed events change nothing', () => {
    const g = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    expect(name(g.event(EventFlag.Malformed | EventFlag.Content, 1))).toBe('Hold');
    expect(name(g.endOfChunk())).toBe('Hold');
    expect(g.content).toBe(false);
  });

  it('a transport failure before commit is a Retry, after it an EndWithError, with the error given', () => {
    const e = new Error('deadline');
    const before = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    expect(name(before.broke(e))).toBe('Retry');
    expect(before.error).toBe(e);
    const after = new StreamGuard({ waits: WAITS, commit: 'first-token' }, 0);
    after.event(EventFlag.Content, 1);
    after.endOfChunk();
    expect(name(after.broke(e))).toBe('EndWithError');
  });

  it('resume: a cut or a stall after commit is Resume where the attempt may be continued; never before commit', () => {
    const setup: StreamGuardSetup = { waits: WAITS, commit: 'first-token', resume: true };
    const cut = new StreamGuard(setup, 0);
    cut.event(EventFlag.Content, 1);
    cut.endOfChunk();
    expect(name(cut.close())).toBe('Resume');
    expect(cut.error?.message).toMatch(/terminal signal/);
    const stall = new StreamGuard(setup, 0);
    stall.event(EventFlag.Content, 1);
    stall.endOfChunk();
    expect(name(stall.timer(stall.due()))).toBe('Resume');
    const early = new StreamGuard(setup, 0);
    early.headers();
    expect(name(early.close())).toBe('Retry');
    // The provider's own error is delivered as it came: not resumed.
    const error = new StreamGuard(setup, 0);
    error.event(EventFlag.Content, 1);
    error.endOfChunk();
    expect(name(error.event(EventFlag.Error, 2))).toBe('EndWithError');
  });

  it('a caller holding the stream back is no stall: quiet counts only while waiting', () => {
    const g = new StreamGuard({ waits: { headersMs: 10, firstTokenMs: 10, idleMs: 100 }, commit: 'first-token' }, 0);
    g.headers();
    g.event(EventFlag.Content, 0);
    g.endOfChunk();
    g.waiting(false, 50);
    expect(g.due()).toBe(Infinity);
    g.waiting(true, 500);
    expect(g.due()).toBe(600);
    expect(StreamDecision.Hold).toBe(g.timer(599));
    expect(name(g.timer(600))).toBe('EndWithError');
  });
});
