import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/engine/errors.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { FaultPhase } from '../../src/upstream/config.js';
import { FaultTimeline } from '../../src/upstream/fault-timeline.js';
import { Detail, RequestFlag, StreamEvent } from '../../src/upstream/response.js';
import { MODEL_DEFAULTS, UpstreamModel } from '../../src/upstream/upstream-model.js';
import { TestScheduler } from './test-scheduler.js';

/** One model: ttft 100 ms, 10 ms per token; requests of 10 prompt + 20 output tokens (so 300 ms unhurt). */
function setup(faults: Array<Partial<FaultPhase> & Pick<FaultPhase, 'kind'>>) {
  const sched = new TestScheduler();
  const seen: Array<[string, number, number]> = [];
  const up = new UpstreamModel(
    {
      models: [{ ...MODEL_DEFAULTS, name: 'm', slots: 4, queue: 0, ttftMs: 100, tpotMs: 10 }],
      faults: faults.map((f) => ({ fromMs: 0, toMs: 10_000, rate: 1, ...f })),
      cancelOnDisconnect: false,
    },
    sched,
    new SeededRandom(1),
    {
      onResponse: (_id, _status, detail, _tokens, _retry, at) => seen.push(['answer', detail, at]),
      onStream: (_id, event, _ms, _tokens, at) =>
        seen.push([event === StreamEvent.FirstToken ? 'first' : 'stall', 0, at]),
    },
  );
  const submit = (flags = 0, route?: string) => up.submit(1, 0, 10, 20, sched.now(), flags, 20, 0, route);
  return { sched, seen, submit };
}

describe('added latency: a fixed delay, a distribution, or a factor', () => {
  it('latency addMs adds a fixed delay before the answer (its first token when streamed)', () => {
    const plain = setup([{ kind: 'latency', addMs: 1000 }]);
    plain.submit();
    plain.sched.runAll();
    expect(plain.seen).toEqual([['answer', Detail.None, 1300]]);
    const streamed = setup([{ kind: 'latency', addMs: 1000 }]);
    streamed.submit(RequestFlag.Stream);
    streamed.sched.runAll();
    expect(streamed.seen).toEqual([
      ['first', 0, 1100],
      ['answer', Detail.None, 1300],
    ]);
  });

  it('a factor and an added time together, and overlapping phases add up', () => {
    const { sched, seen, submit } = setup([
      { kind: 'latency', factor: 2, addMs: 500 },
      { kind: 'latency', addMs: { dist: 'const', value: 250 } },
    ]);
    submit();
    sched.runAll();
    expect(seen).toEqual([['answer', Detail.None, 600 + 750]]);
  });

  it('a distribution is drawn per request, within its range', () => {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { sched, seen, submit } = setup([{ kind: 'latency', addMs: { dist: 'uniform', min: 100, max: 900 } }]);
      // Each setup has its own seeded draws; offset the clock so the draws differ.
      sched.runUntil(i);
      submit();
      sched.runAll();
      times.push(seen[0][2] - i - 300);
    }
    expect(Math.min(...times)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...times)).toBeLessThanOrEqual(900);
  });

  it('slow-first-token addMs delays only the first token; with ttftMs, at least ttftMs then the add', () => {
    const add = setup([{ kind: 'slow-first-token', addMs: 2000 }]);
    add.submit(RequestFlag.Stream);
    add.sched.runAll();
    expect(add.seen).toEqual([
      ['first', 0, 2100],
      ['answer', Detail.SlowFirstToken, 2300],
    ]);
    const both = setup([{ kind: 'slow-first-token', ttftMs: 1000, addMs: 500 }]);
    both.submit(RequestFlag.Stream);
    both.sched.runAll();
    expect(both.seen[0]).toEqual(['first', 0, 1500]);
  });

  it('a phase with a route hits only requests on that route (a server has routes; the simulator none)', () => {
    const other = setup([{ kind: 'latency', addMs: 1000, route: '/v1/messages' }]);
    other.submit(0, '/v1/chat/completions');
    other.sched.runAll();
    expect(other.seen).toEqual([['answer', Detail.None, 300]]);
    const hit = setup([{ kind: 'latency', addMs: 1000, route: '/v1/messages' }]);
    hit.submit(0, '/v1/messages');
    hit.sched.runAll();
    expect(hit.seen).toEqual([['answer', Detail.None, 1300]]);
  });

  it.each([
    [{ kind: 'latency' }, 'upstream.faults[0].factor or upstream.faults[0].addMs is required for kind latency'],
    [{ kind: 'latency', addMs: -1 }, 'upstream.faults[0].addMs must be a number of ms >= 0, got -1'],
    [
      { kind: 'latency', addMs: { dist: 'uniform', min: 5, max: 1 } },
      'upstream.faults[0].addMs max must be at least min (5), got 1',
    ],
    [{ kind: 'latency', addMs: { dist: 'zipf' } }, 'upstream.faults[0].addMs must be a number of ms or {dist:'],
    [
      { kind: 'latency', factor: 2, route: 'v1/x' },
      'upstream.faults[0].route must be a path like /v1/chat/completions',
    ],
  ] as Array<[Partial<FaultPhase> & Pick<FaultPhase, 'kind'>, string]>)('%j is refused', (f, message) => {
    const load = () =>
      new FaultTimeline([{ fromMs: 0, toMs: 1, rate: 1, ...f } as FaultPhase], ['m'], new SeededRandom(1));
    expect(load).toThrow(OptionError);
    expect(load).toThrow(message);
  });
});
