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

/**
 * One streamed answer, times from its submission: the first token, later chunks, and the end
 * (a complete 200) or none (the stream stalls with the connection open after its last chunk).
 */
interface Shape {
  first: number;
  chunks: number[];
  end?: number;
}

const FIRST = 1;
const CHUNK = 2;
const END = 3;

/**
 * A streaming leaf transport on the heap's virtual clock, answering each request with the next
 * shape (the last repeats). `announce` tells a stall when it starts (`StreamEvent.Stall`), as
 * the simulated upstream does; otherwise it only keeps when the stream last moved
 * (`lastEventAt`), as the HTTP transport does.
 */
class StreamingTransport implements LeafTransport, EventHandler {
  readonly submitted: Array<{ model: number; at: number }> = [];
  readonly cancelled: number[] = [];
  target!: TrafficInterpreter;
  readonly handler: number;
  private readonly requests: Array<{ reqId: number; shape: Shape; gone: boolean }> = [];
  private readonly lastAt: number[] = [];
  private readonly current: number[] = [];

  constructor(
    private readonly heap: EventHeap,
    private readonly shapes: Shape[],
    private readonly announce: boolean,
  ) {
    this.handler = heap.register(this);
    if (announce) this.lastEventAt = undefined;
  }

  modelIndex(name: string): number {
    return ['primary', 'fallback'].indexOf(name);
  }

  submit(reqId: number, model: number, _prompt: number, _max: number, now: number): void {
    const shape = this.shapes[Math.min(this.submitted.length, this.shapes.length - 1)];
    this.submitted.push({ model, at: now });
    const slot = this.requests.push({ reqId, shape, gone: false }) - 1;
    this.current[reqId] = slot;
    this.lastAt[reqId] = -1;
    this.heap.schedule(now + shape.first, this.handler, FIRST, slot);
    for (const t of shape.chunks) this.heap.schedule(now + t, this.handler, CHUNK, slot);
    if (shape.end !== undefined) this.heap.schedule(now + shape.end, this.handler, END, slot);
  }

  cancel(reqId: number, now: number): void {
    this.cancelled.push(now);
    this.requests[this.current[reqId]].gone = true;
  }

  lastEventAt?: (reqId: number) => number = (reqId) => this.lastAt[reqId];

  handle(kind: number, slot: number, now: number): void {
    const r = this.requests[slot];
    if (r.gone) return;
    const { reqId, shape } = r;
    const last = shape.chunks.length === 0 ? shape.first : shape.chunks[shape.chunks.length - 1];
    if (kind === END) {
      r.gone = true;
      return this.target.onResponse(reqId, 200, Detail.None, 100, -1, now);
    }
    this.lastAt[reqId] = now;
    if (kind === FIRST) this.target.onStream(reqId, StreamEvent.FirstToken, 0, 0, now);
    // The simulated upstream announces a stall as it starts: after the last chunk of a stream that never ends.
    const stallsNow = now - this.submitted[slot].at === last && shape.end === undefined;
    if (this.announce && stallsNow) this.target.onStream(reqId, StreamEvent.Stall, Infinity, 0, now);
  }
}

/** What the run's observer and the engine said. */
class Seen implements TrafficObserver {
  roots: Array<{ ok: boolean; at: number }> = [];
  attempts: number[] = [];
  events: string[] = [];
  rootOffered(): void {}
  rootDone(_s: number, t: number, ok: boolean): void {
    this.roots.push({ ok, at: t });
  }
  logicalCall(): void {}
  attempt(_l: number, t: number): void {
    this.attempts.push(t);
  }
  callDone(): void {}
  shed(): void {}
  upstreamAttempt(): void {}
  upstreamResponse(): void {}
  wasted(): void {}
}

const ENGINE_LAYER: RetryPolicy = {
  policy: 'engine',
  // Held whole (commit: complete), so a stall after the first tokens is retried or failed over.
  engine: { maxAttempts: 2, stream: { firstTokenMs: 1_000, idleMs: 500, headersMs: 1_000, commit: 'complete' } },
};

function config(retry: RetryPolicy): TrafficConfig {
  return {
    arrival: { type: 'constant', rate: 1 },
    deadlineMs: Infinity,
    layers: [{ name: 'llm', fanout: 1, timeoutMs: 30_000, retry, stream: true, models: ['primary', 'fallback'] }],
    tokens: { prompt: 10, completion: 10 },
    engine: ENGINE,
  };
}

/** One streamed call through `retry` against `shapes`, on a virtual clock; counts the interpreter's own timers. */
function oneCall(retry: RetryPolicy, shapes: Shape[], announce: boolean) {
  const heap = new EventHeap();
  const transport = new StreamingTransport(heap, shapes, announce);
  const seen = new Seen();
  let timers = 0;
  const schedule = heap.schedule.bind(heap);
  const interpreter = new TrafficInterpreter(
    config(retry),
    {
      now: () => heap.now(),
      register: (h) => heap.register(h),
      schedule: (at, handler, kind, id) => {
        if (handler !== transport.handler) timers++;
        schedule(at, handler, kind, id);
      },
    },
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
  return { seen, transport, timers };
}

// First token at 100 ms, then a chunk every 100 ms to 2.4 s, the end at 2.5 s.
const STEADY: Shape = { first: 100, chunks: Array.from({ length: 23 }, (_, i) => 200 + i * 100), end: 2_500 };
// The same start, then silence after the chunk at 700 ms with the connection open.
const STALLED: Shape = { first: 100, chunks: [400, 700] };

describe('the idle watch of a streamed engine layer, on a transport that cannot announce stalls', () => {
  it('lets a stream whose gaps stay under idleMs run to its end, on one timer re-armed about once per idleMs', () => {
    const { seen, transport, timers } = oneCall(ENGINE_LAYER, [STEADY], false);
    expect(transport.submitted).toEqual([{ model: 0, at: 0 }]);
    expect(transport.cancelled).toEqual([]);
    expect(seen.roots).toEqual([{ ok: true, at: 2_500 }]);
    // The attempt's timeout and first-token timers, then the idle watch: armed at 600 and
    // re-armed for the rest of the gap at 1_100, 1_600, 2_100 and 2_600 (stale by then) — five
    // timers for 24 events, not one per event.
    expect(timers).toBe(2 + 5);
  });

  it('cuts a stream that stalls after its first tokens at idleMs after its last chunk, as stream_stall, and fails over', () => {
    const { seen, transport } = oneCall(ENGINE_LAYER, [STALLED, STEADY], false);
    // Last chunk at 700 ms: abandoned at 1_200, the fallback asked at once.
    expect(transport.cancelled).toEqual([1_200]);
    expect(transport.submitted).toEqual([
      { model: 0, at: 0 },
      { model: 1, at: 1_200 },
    ]);
    expect(seen.events).toEqual(['fallback stream_stall']);
    expect(seen.roots).toEqual([{ ok: true, at: 1_200 + 2_500 }]);
  });

  it('ends exactly as the simulator does, where the upstream announces the stall', () => {
    for (const shapes of [[STALLED, STEADY], [STEADY], [STALLED]]) {
      const polled = oneCall(ENGINE_LAYER, shapes, false);
      const announced = oneCall(ENGINE_LAYER, shapes, true);
      expect(polled.seen).toEqual(announced.seen);
      expect(polled.transport.submitted).toEqual(announced.transport.submitted);
      expect(polled.transport.cancelled).toEqual(announced.transport.cancelled);
    }
  });

  it('with commit first-token (as shipped), a stall after the first tokens ends the call at idleMs: not retried, not failed over', () => {
    const early: RetryPolicy = {
      ...ENGINE_LAYER,
      engine: { ...ENGINE_LAYER.engine, stream: { ...ENGINE_LAYER.engine!.stream, commit: 'first-token' } },
    } as RetryPolicy;
    const { seen, transport } = oneCall(early, [STALLED, STEADY], false);
    expect(transport.cancelled).toEqual([1_200]);
    expect(transport.submitted).toEqual([{ model: 0, at: 0 }]);
    expect(seen.events).toEqual([]);
    expect(seen.roots).toEqual([{ ok: false, at: 1_200 }]);
  });

  it('leaves a plain caller to its own timeout: a naive layer waits out the stall', () => {
    const naive: RetryPolicy = { policy: 'naive', attempts: 1, backoff: {} };
    const { seen, transport } = oneCall(naive, [STALLED], false);
    expect(transport.cancelled).toEqual([30_000]);
    expect(seen.roots).toEqual([{ ok: false, at: 30_000 }]);
  });
});
