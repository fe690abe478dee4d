import { describe, expect, it } from 'vitest';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { SeededRandom } from '../../src/engine/random.js';
import { EventHeap } from '../../src/run/sim/event-heap.js';
import type { RetryPolicy, TrafficConfig } from '../../src/traffic/config.js';
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
  ) {
    this.handler = heap.register(this);
  }

  modelIndex(name: string): number {
    return ['primary', 'fallback'].indexOf(name);
  }

  submit(reqId: number, model: number, _p: number, _m: number, now: number): void {
    const slot = this.reqs.push({ reqId, gone: false }) - 1;
    this.submitted.push({ model, at: now });
    const o = slot === 0 ? this.o : { firstAt: 0, endAt: 0 };
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
      const o = slot === 0 ? this.o : { endAt: 0 };
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
function simulate(o: Ordering) {
  const heap = new EventHeap();
  const transport = new ScriptedTransport(heap, o);
  const seen = new Seen();
  const retry: RetryPolicy = {
    policy: 'engine',
    engine: { maxAttempts: 2, backoff: { baseMs: 1, capMs: 1 }, stream: { ...o.waits, commit: o.commit } },
  } as RetryPolicy;
  const config: TrafficConfig = {
    arrival: { type: 'constant', rate: 1 },
    deadlineMs: Infinity,
    layers: [{ name: 'llm', fanout: 1, timeoutMs: 60_000, retry, stream: true, models: ['primary', 'fallback'] }],
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
