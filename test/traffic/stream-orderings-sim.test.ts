import { describe, expect, it } from 'vitest';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { SeededRandom } from '../../src/engine/random.js';
import { EventHeap } from '../../src/run/sim/event-heap.js';
import type { EngineConfig, RetryPolicy, TrafficConfig } from '../../src/traffic/config.js';
import { TrafficInterpreter } from '../../src/traffic/interpreter.js';
import type { LeafTransport, TrafficObserver } from '../../src/traffic/observer.js';
import { Detail, StreamEvent } from '../../src/upstream/response.js';
import type { EventHandler } from '../../src/upstream/scheduler.js';
import { ENGINE } from '../run/sim/spec.js';
import { ORDERINGS, type Ordering } from '../stream-orderings.js';

const FIRST = 1;
const END = 2;
const CUT = 3;

/**
 * The simulator's side of the limit orderings: a streaming leaf transport on the heap's clock
 * that plays the ordering's script to the first attempt (the simulated upstream sends the
 * headers with the first token; a stall is announced as it starts, as the simulated upstream
 * does) and answers every later attempt at once, whole.
 */
class ScriptedTransport implements LeafTransport, EventHandler {
  readonly submitted: Array<{ model: number; at: number }> = [];
  readonly cancelled: number[] = [];
  target!: TrafficInterpreter;
  readonly handler: number;
  private readonly reqs: Array<{ reqId: number; gone: boolean }> = [];

  constructor(
    private readonly heap: EventHeap,
    private readonly o: Ordering,
    /** What later attempts get (default: the whole answer at once). */
    private readonly later: Partial<Ordering> = { firstAt: 0, endAt: 0 },
  ) {
    this.handler = heap.register(this);
  }

  modelIndex(name: string): number {
    return ['primary', 'fallback'].indexOf(name);
  }

  submit(reqId: number, model: number, _p: number, _m: number, now: number): void {
    const slot = this.reqs.push({ reqId, gone: false }) - 1;
    this.submitted.push({ model, at: now });
    const o = slot === 0 ? this.o : this.later;
    if (o.firstAt !== undefined) this.heap.schedule(now + o.firstAt, this.handler, FIRST, slot);
    if (o.endAt !== undefined) this.heap.schedule(now + o.endAt, this.handler, END, slot);
    if ('cutAt' in o && o.cutAt !== undefined) this.heap.schedule(now + o.cutAt, this.handler, CUT, slot);
  }

  cancel(reqId: number, now: number): void {
    this.cancelled.push(now);
    for (const r of this.reqs) if (r.reqId === reqId) r.gone = true;
  }

  handle(kind: number, slot: number, now: number): void {
    const r = this.reqs[slot];
    if (r.gone) return;
    if (kind === FIRST) {
      this.target.onStream(r.reqId, StreamEvent.FirstToken, 0, 0, now);
      // Nothing more is scripted: the stream stalls with the connection open.
      const o = slot === 0 ? this.o : this.later;
      if (o.endAt === undefined && !('cutAt' in o && o.cutAt !== undefined))
        this.target.onStream(r.reqId, StreamEvent.Stall, Infinity, 0, now);
      return;
    }
    r.gone = true;
    this.target.onResponse(r.reqId, 200, kind === CUT ? Detail.Cut : Detail.None, 10, -1, now);
  }
}

class Seen implements TrafficObserver {
  roots: Array<{ ok: boolean; at: number }> = [];
  events: string[] = [];
  rootOffered(): void {}
  rootDone(_s: number, t: number, ok: boolean): void {
    this.roots.push({ ok, at: t });
  }
  logicalCall(): void {}
  attempt(): void {}
  callDone(): void {}
  shed(): void {}
  upstreamAttempt(): void {}
  upstreamResponse(): void {}
  wasted(): void {}
}

/** One streamed call of an engine layer (two targets, two attempts) against the ordering's script. */
function simulate(o: Ordering, later?: Partial<Ordering>, targets?: EngineConfig['targets']) {
  const heap = new EventHeap();
  const transport = new ScriptedTransport(heap, o, later);
  const seen = new Seen();
  const retry: RetryPolicy = {
    policy: 'engine',
    engine: {
      maxAttempts: 2,
      backoff: { baseMs: 1, capMs: 1 },
      stream: { ...o.waits, commit: o.commit },
      ...(targets === undefined ? {} : { targets }),
    },
  } as RetryPolicy;
  const config: TrafficConfig = {
    arrival: { type: 'constant', rate: 1 },
    deadlineMs: Infinity,
    layers: [{ name: 'llm', fanout: 1, timeoutMs: 600_000, retry, stream: true, models: ['primary', 'fallback'] }],
    tokens: { prompt: 10, completion: 10 },
    engine: ENGINE,
  };
  const interpreter = new TrafficInterpreter(
    config,
    { now: () => heap.now(), register: (h) => heap.register(h), schedule: heap.schedule.bind(heap) },
    transport,
    seen,
    new SeededRandom(3),
  );
  transport.target = interpreter;
  interpreter.enginesOf(0)?.guards[0].subscribe((e: GuardEvent) => {
    if (e.type === 'fallback' || e.type === 'retry') seen.events.push(`${e.type} ${'why' in e ? e.why : e.class}`);
  });
  interpreter.startRoot(0, 0);
  heap.runUntil(1e9);
  return { seen, transport };
}

describe('the stream guard’s limit orderings in the simulator: the same verdicts as the engine’s StreamGuard', () => {
  it.each(ORDERINGS)('$name', (o) => {
    const { seen, transport } = simulate(o);
    const { decision, error, at } = o.verdict;
    const first = transport.submitted[0];
    expect(first).toEqual({ model: 0, at: 0 });
    if (decision === 'Complete') {
      expect(transport.submitted).toHaveLength(1);
      expect(seen.events).toEqual([]);
      expect(seen.roots).toEqual([{ ok: true, at }]);
    } else if (decision === 'EndWithError') {
      // The caller had the stream: not retried, not failed over; the call ends failed then.
      expect(transport.submitted).toHaveLength(1);
      expect(seen.events).toEqual([]);
      expect(seen.roots).toEqual([{ ok: false, at }]);
    } else if (decision === 'FailOver') {
      expect(seen.events).toEqual([`fallback ${error}`]);
      expect(transport.submitted[1]).toEqual({ model: 1, at });
      expect(seen.roots).toEqual([{ ok: true, at }]);
    } else {
      expect(seen.events).toEqual([`retry ${error}`]);
      expect(transport.submitted[1].model).toBe(0);
      expect(transport.submitted[1].at).toBeGreaterThanOrEqual(at);
      expect(seen.roots[0].ok).toBe(true);
    }
  });
});

describe('limits per model target in the simulator (engine.targets)', () => {
  // The engine's own: headers 10 s, first token 20 s, idle 15 s; a reasoning primary with 120 s, a chat fallback with 10 s.
  const chain: Ordering = {
    name: 'silent reasoning model',
    waits: { headersMs: 200_000, firstTokenMs: 20_000, idleMs: 15_000 },
    commit: 'first-token',
    verdict: { decision: 'FailOver', error: 'stream_stall', at: 120_000 },
  };
  const targets = { primary: { stream: { firstTokenMs: 120_000 } }, fallback: { stream: { firstTokenMs: 10_000 } } };

  it('a silent reasoning model fails over at its own 120 s; the silent chat fallback is abandoned 10 s after its start', () => {
    const { seen, transport } = simulate(chain, {}, targets);
    expect(seen.events[0]).toBe('fallback stream_stall');
    expect(transport.submitted.slice(0, 2)).toEqual([
      { model: 0, at: 0 },
      { model: 1, at: 120_000 },
    ]);
    expect(transport.cancelled.slice(0, 2)).toEqual([120_000, 130_000]);
  });

  it('the reasoning model’s first token at 100 s is waited for (the engine’s 20 s would have failed it over)', () => {
    const thinks = { ...chain, firstAt: 100_000, endAt: 101_000 };
    const own = simulate(thinks, {}, targets);
    expect(own.seen.events).toEqual([]);
    expect(own.seen.roots).toEqual([{ ok: true, at: 101_000 }]);
    const without = simulate(thinks, {});
    expect(without.seen.events[0]).toBe('fallback stream_stall');
    expect(without.transport.submitted[1]).toEqual({ model: 1, at: 20_000 });
  });
});
