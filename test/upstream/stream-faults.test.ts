import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/engine/errors.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { FaultPhase, ModelConfig } from '../../src/upstream/config.js';
import { FaultTimeline } from '../../src/upstream/fault-timeline.js';
import { Detail, RequestFlag, StreamEvent } from '../../src/upstream/response.js';
import { MODEL_DEFAULTS, NETWORK_MS, UpstreamModel } from '../../src/upstream/upstream-model.js';
import { TestScheduler } from './test-scheduler.js';

type Seen =
  | { what: 'answer'; id: number; status: number; detail: number; tokens: number; at: number }
  | { what: 'first' | 'stall'; id: number; ms: number; tokens: number; at: number };

/** One model: 2 slots, ttft 100 ms, 10 ms per token; requests of 10 prompt + 20 output tokens. */
function setup(faults: Array<Partial<FaultPhase> & Pick<FaultPhase, 'kind'>>, model: Partial<ModelConfig> = {}) {
  const sched = new TestScheduler();
  const seen: Seen[] = [];
  const up = new UpstreamModel(
    {
      models: [{ name: 'm', slots: 2, queue: 0, ttftMs: 100, tpotMs: 10, ...MODEL_DEFAULTS, ...model }],
      faults: faults.map((f) => ({ fromMs: 0, toMs: 10_000, rate: 1, ...f })),
      cancelOnDisconnect: false,
    },
    sched,
    new SeededRandom(1),
    {
      onResponse: (id, status, detail, tokens, _retry, at) =>
        seen.push({ what: 'answer', id, status, detail, tokens, at }),
      onStream: (id, event, ms, tokens, at) =>
        seen.push({ what: event === StreamEvent.FirstToken ? 'first' : 'stall', id, ms, tokens, at }),
    },
  );
  const submit = (id: number, flags: number = RequestFlag.Stream, prompt = 10, out = 20) =>
    up.submit(id, 0, prompt, out, sched.now(), flags);
  return { sched, seen, up, submit };
}

describe('stream faults in the upstream model', () => {
  it('a plain stream reports its first token at ttft, then answers after n × tpot', () => {
    const { sched, seen, submit } = setup([]);
    submit(1);
    sched.runUntil(1_000);
    expect(seen).toEqual([
      { what: 'first', id: 1, ms: 200, tokens: 20, at: 100 },
      { what: 'answer', id: 1, status: 200, detail: Detail.None, tokens: 30, at: 300 },
    ]);
  });

  it('a request that is not streamed gets no stream events and the same answer', () => {
    const { sched, seen, submit } = setup([]);
    submit(1, 0);
    sched.runUntil(1_000);
    expect(seen).toEqual([{ what: 'answer', id: 1, status: 200, detail: Detail.None, tokens: 30, at: 300 }]);
  });

  it('slow-first-token: the first token comes at ttftMs, the tokens after it at their pace', () => {
    const { sched, seen, submit } = setup([{ kind: 'slow-first-token', ttftMs: 5_000 }]);
    submit(1);
    sched.runUntil(10_000);
    expect(seen).toEqual([
      { what: 'first', id: 1, ms: 200, tokens: 20, at: 5_000 },
      { what: 'answer', id: 1, status: 200, detail: Detail.SlowFirstToken, tokens: 30, at: 5_200 },
    ]);
  });

  it('stall: after k tokens nothing for stallMs, the connection open; then the rest', () => {
    const { sched, seen, submit } = setup([{ kind: 'stall', afterTokens: 5, stallMs: 3_000 }]);
    submit(1);
    sched.runUntil(10_000);
    expect(seen).toEqual([
      { what: 'first', id: 1, ms: 200, tokens: 20, at: 100 },
      { what: 'stall', id: 1, ms: 3_000, tokens: 5, at: 150 },
      { what: 'answer', id: 1, status: 200, detail: Detail.Stalled, tokens: 30, at: 3_300 },
    ]);
  });

  it('stall forever: never answers, holds its slot until the caller leaves, then frees it', () => {
    const { sched, seen, up, submit } = setup([{ kind: 'stall', afterTokens: 5, toMs: 50 }], { slots: 1, queue: 1 });
    submit(1);
    sched.runUntil(60);
    submit(2); // after the phase: queued behind the stalled one
    sched.runUntil(60_000);
    expect(seen.filter((s) => s.id === 1)).toEqual([
      { what: 'first', id: 1, ms: 50, tokens: 5, at: 100 },
      { what: 'stall', id: 1, ms: Infinity, tokens: 5, at: 150 },
    ]);
    expect(seen.some((s) => s.id === 2)).toBe(false);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 1, queued: 1 });
    up.cancel(1, 60_000);
    sched.runUntil(70_000);
    expect(seen.filter((s) => s.id === 2).map((s) => s.what)).toEqual(['first', 'answer']);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 0, queued: 0, cancelled: 1, wastedTokens: 15 });
  });

  it('stall forever, cancelled before the stall began: the record is reclaimed by its last event', () => {
    const { sched, seen, up, submit } = setup([{ kind: 'stall', afterTokens: 5 }], { slots: 1 });
    submit(1);
    sched.runUntil(120); // first token seen, stall not yet
    up.cancel(1, 120);
    sched.runUntil(1_000);
    submit(1); // the same id again, stalls again
    sched.runUntil(2_000);
    expect(seen.map((s) => s.what)).toEqual(['first', 'first', 'stall']);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 1, cancelled: 1 });
  });

  it('cut: a 200 after afterTokens tokens, flagged Cut (no terminal event)', () => {
    const { sched, seen, submit } = setup([{ kind: 'cut', afterTokens: 8 }]);
    submit(1);
    sched.runUntil(1_000);
    expect(seen).toEqual([
      { what: 'first', id: 1, ms: 80, tokens: 8, at: 100 },
      { what: 'answer', id: 1, status: 200, detail: Detail.Cut, tokens: 18, at: 180 },
    ]);
  });

  it('cut after more tokens than the answer has is no cut', () => {
    const { sched, seen, submit } = setup([{ kind: 'cut', afterTokens: 50 }]);
    submit(1);
    sched.runUntil(1_000);
    expect(seen.at(-1)).toMatchObject({ what: 'answer', detail: Detail.None, tokens: 30 });
  });

  it('malformed and missing-done: complete answers, flagged', () => {
    for (const [kind, detail] of [
      ['malformed', Detail.Malformed],
      ['missing-done', Detail.MissingDone],
    ] as const) {
      const { sched, seen, submit } = setup([{ kind }]);
      submit(1);
      sched.runUntil(1_000);
      expect(seen.at(-1)).toEqual({ what: 'answer', id: 1, status: 200, detail, tokens: 30, at: 300 });
    }
  });

  it('content-filter: finish after afterTokens (200), or reject (400 at once)', () => {
    const finish = setup([{ kind: 'content-filter', afterTokens: 3 }]);
    finish.submit(1);
    finish.sched.runUntil(1_000);
    expect(finish.seen.at(-1)).toEqual({
      what: 'answer',
      id: 1,
      status: 200,
      detail: Detail.ContentFilter,
      tokens: 13,
      at: 130,
    });
    const reject = setup([{ kind: 'content-filter', mode: 'reject' }]);
    reject.submit(1);
    reject.sched.runUntil(1_000);
    expect(reject.seen).toEqual([
      { what: 'answer', id: 1, status: 400, detail: Detail.ContentFilter, tokens: 0, at: NETWORK_MS },
    ]);
  });

  it('prefill-rejected: a declaring model answers a request with an assistant prefill 400, others served', () => {
    const { sched, seen, submit } = setup([{ kind: 'prefill-rejected' }], { continuation: 'prefill' });
    submit(1, RequestFlag.Stream | RequestFlag.Prefill);
    submit(2, RequestFlag.Stream);
    sched.runUntil(1_000);
    expect(seen.filter((s) => s.what === 'answer').map((s) => [s.id, (s as { status: number }).status])).toEqual([
      [1, 400],
      [2, 200],
    ]);
    expect(seen[0]).toMatchObject({ id: 1, detail: Detail.PrefillRejected });
  });

  it('continuation: a declaring model serves a prefill; one that does not answers it 400 at once', () => {
    const declared = setup([], { continuation: 'prefill' });
    declared.submit(1, RequestFlag.Stream | RequestFlag.Prefill);
    declared.sched.runUntil(1_000);
    expect(declared.seen.at(-1)).toMatchObject({ what: 'answer', id: 1, status: 200, detail: Detail.None });
    const plain = setup([]);
    plain.submit(1, RequestFlag.Stream | RequestFlag.Prefill);
    plain.sched.runUntil(1_000);
    expect(plain.seen).toEqual([
      { what: 'answer', id: 1, status: 400, detail: Detail.PrefillRejected, tokens: 0, at: NETWORK_MS },
    ]);
  });

  it('a prefill-rejected phase that hits no declaring model is refused', () => {
    expect(() => setup([{ kind: 'prefill-rejected' }])).toThrow(
      'upstream.faults[0]: prefill-rejected, but no model declares continuation: prefill, so it rejects every prefill already',
    );
  });

  it('context-length: the phase window refuses larger requests with 400 context_length_exceeded', () => {
    const { sched, seen, submit } = setup([{ kind: 'context-length', contextTokens: 100 }]);
    submit(1, RequestFlag.Stream, 90, 20);
    submit(2, RequestFlag.Stream, 50, 20);
    sched.runUntil(1_000);
    const answers = seen.filter((s) => s.what === 'answer');
    expect(answers[0]).toMatchObject({ id: 1, status: 400, detail: Detail.ContextLength });
    expect(answers[1]).toMatchObject({ id: 2, status: 200, detail: Detail.None });
  });

  it('a caller that gave up is told nothing more (no stream events)', () => {
    const { sched, seen, up, submit } = setup([{ kind: 'stall', afterTokens: 5, stallMs: 1_000 }]);
    submit(1);
    up.cancel(1, 0);
    sched.runUntil(5_000);
    expect(seen).toEqual([]);
    expect(up.stats(0).models[0]).toMatchObject({ busy: 0, wastedTokens: 30 });
  });
});

describe('stream fault validation names the path', () => {
  const load = (f: Partial<FaultPhase> & Pick<FaultPhase, 'kind'>) => () =>
    new FaultTimeline([{ fromMs: 0, toMs: 1, rate: 1, ...f }], ['m'], new SeededRandom(1));
  it.each([
    [
      { kind: 'slow-first-token' },
      'upstream.faults[0].ttftMs or upstream.faults[0].addMs is required for kind slow-first-token',
    ],
    [{ kind: 'slow-first-token', ttftMs: -1 }, 'upstream.faults[0].ttftMs must be a number >= 0'],
    [{ kind: 'stall' }, 'upstream.faults[0].afterTokens is required for kind stall'],
    [{ kind: 'stall', afterTokens: 0 }, 'upstream.faults[0].afterTokens must be an integer >= 1'],
    [{ kind: 'stall', afterTokens: 2, stallMs: 0 }, 'upstream.faults[0].stallMs must be a number > 0'],
    [{ kind: 'cut' }, 'upstream.faults[0].afterTokens is required for kind cut'],
    [{ kind: 'cut', afterTokens: 1.5 }, 'upstream.faults[0].afterTokens must be an integer >= 1'],
    [{ kind: 'content-filter', mode: 'block' }, 'upstream.faults[0].mode must be one of finish, reject'],
    [{ kind: 'content-filter', afterTokens: -1 }, 'upstream.faults[0].afterTokens must be an integer >= 0'],
    [{ kind: 'context-length' }, 'upstream.faults[0].contextTokens is required for kind context-length'],
    [{ kind: 'context-length', contextTokens: 0 }, 'upstream.faults[0].contextTokens must be an integer >= 1'],
  ] as Array<[Partial<FaultPhase> & Pick<FaultPhase, 'kind'>, string]>)('%j', (f, message) => {
    expect(load(f)).toThrow(OptionError);
    expect(load(f)).toThrow(message);
  });
});
