import { describe, expect, it } from 'vitest';
import type { ShedReason } from '../../src/engine/errors.js';
import { SeededRandom } from '../../src/engine/random.js';
import { EventHeap } from '../../src/run/sim/event-heap.js';
import type { LayerConfig, RetryPolicy, TrafficConfig } from '../../src/traffic/config.js';
import { STATUS_NO_ANSWER, TrafficInterpreter } from '../../src/traffic/interpreter.js';
import type { LeafTransport, TrafficObserver } from '../../src/traffic/observer.js';
import { HTTP_DEFAULTS } from '../../src/integrations/http-defaults.js';
import { Detail } from '../../src/upstream/response.js';
import type { EventHandler } from '../../src/upstream/scheduler.js';
import { ENGINE } from '../run/sim/spec.js';

/** What one leaf request gets: a status after `afterMs`, or nothing at all (`hang`). */
type Answer = { status: number; afterMs: number; tokens?: number } | 'hang';

/**
 * A leaf transport that answers from a script, one answer per submitted request in order (the
 * last repeats), on the heap's virtual clock. `ignoreCancel` delivers answers even to requests
 * the caller gave up on, as an upstream without cancel-on-disconnect does.
 */
class ScriptedTransport implements LeafTransport, EventHandler {
  readonly submitted: number[] = [];
  readonly cancelled: number[] = [];
  target!: TrafficInterpreter;
  private readonly handler: number;
  private n = 0;
  private readonly answers: Array<{ status: number; tokens: number }> = [];

  constructor(
    private readonly heap: EventHeap,
    private readonly script: Answer[],
    private readonly ignoreCancel = false,
  ) {
    this.handler = heap.register(this);
  }

  modelIndex(): number {
    return 0;
  }

  submit(reqId: number, _model: number, _prompt: number, _max: number, now: number): void {
    this.submitted.push(now);
    const a = this.script[Math.min(this.n++, this.script.length - 1)];
    if (a === 'hang') return;
    const slot = this.answers.push({ status: a.status, tokens: a.tokens ?? (a.status === 200 ? 10 : 0) }) - 1;
    this.heap.schedule(now + a.afterMs, this.handler, reqId, slot);
  }

  cancel(reqId: number, now: number): void {
    this.cancelled.push(now);
    if (!this.ignoreCancel) this.dropped.add(reqId);
  }

  private readonly dropped = new Set<number>();

  handle(reqId: number, slot: number, now: number): void {
    if (this.dropped.delete(reqId)) return;
    const a = this.answers[slot];
    this.target.onResponse(reqId, a.status, a.status === 503 ? Detail.Overloaded : Detail.None, a.tokens, -1, now);
  }
}

/** Every observer call, counted. */
class Recorder implements TrafficObserver {
  offered = 0;
  roots: Array<{ ok: boolean; within: boolean; at: number }> = [];
  logical: number[] = [];
  attempts: Array<{ layer: number; retry: boolean; at: number }> = [];
  calls: Array<{ layer: number; ok: boolean }> = [];
  sheds: Array<{ layer: number; reason: ShedReason }> = [];
  upstream = 0;
  statuses: number[] = [];
  wastedTokens = 0;

  rootOffered(): void {
    this.offered++;
  }
  rootDone(_start: number, t: number, ok: boolean, within: boolean): void {
    this.roots.push({ ok, within, at: t });
  }
  logicalCall(layer: number, n: number): void {
    this.logical[layer] = (this.logical[layer] ?? 0) + n;
  }
  attempt(layer: number, t: number, retry: boolean): void {
    this.attempts.push({ layer, retry, at: t });
  }
  callDone(layer: number, _start: number, _t: number, ok: boolean): void {
    this.calls.push({ layer, ok });
  }
  shed(layer: number, reason: ShedReason): void {
    this.sheds.push({ layer, reason });
  }
  upstreamAttempt(): void {
    this.upstream++;
  }
  upstreamResponse(_model: number, status: number): void {
    this.statuses.push(status);
  }
  wasted(tokens: number): void {
    this.wastedTokens += tokens;
  }
  attemptsAt(layer: number): number {
    return this.attempts.filter((a) => a.layer === layer).length;
  }
}

function traffic(policies: RetryPolicy[], o: { fanout?: number; timeoutMs?: number; deadlineMs?: number } = {}) {
  const layers: LayerConfig[] = policies.map((retry, i) => ({
    name: `l${i}`,
    fanout: o.fanout ?? 1,
    timeoutMs: i === policies.length - 1 ? (o.timeoutMs ?? Infinity) : Infinity,
    retry,
    models: i === policies.length - 1 ? ['m'] : undefined,
  }));
  const config: TrafficConfig = {
    arrival: { type: 'constant', rate: 1 },
    deadlineMs: o.deadlineMs ?? Infinity,
    layers,
    tokens: { prompt: 10, completion: 10 },
    engine: ENGINE,
  };
  return config;
}

/** One root task through `config` against `script`, run to the end on a virtual clock. */
function oneRoot(config: TrafficConfig, script: Answer[], ignoreCancel = false) {
  const heap = new EventHeap();
  const transport = new ScriptedTransport(heap, script, ignoreCancel);
  const seen = new Recorder();
  const interpreter = new TrafficInterpreter(config, heap, transport, seen, new SeededRandom(7));
  transport.target = interpreter;
  interpreter.startRoot(0, 0);
  heap.runUntil(1e9);
  return { seen, transport, interpreter };
}

const naive = (attempts: number): RetryPolicy => ({ policy: 'naive', attempts, backoff: { baseMs: 10, capMs: 10 } });
const none: RetryPolicy = { policy: 'none' };

describe('TrafficInterpreter', () => {
  it('fans a root out down the layers: fan-out 2 over 3 layers is 4 leaf calls, each one attempt', () => {
    const { seen } = oneRoot(traffic([none, none, none], { fanout: 2 }), [{ status: 200, afterMs: 5 }]);
    expect(seen.offered).toBe(1);
    expect(seen.logical).toEqual([1, 2, 4]);
    expect(seen.upstream).toBe(4);
    expect(seen.roots).toEqual([{ ok: true, within: true, at: 5 }]);
    expect(seen.calls.every((c) => c.ok)).toBe(true);
    expect(seen.attempts.every((a) => !a.retry)).toBe(true);
  });

  it('multiplies attempts layer by layer at full outage: naive 3 × 3 × 3 = 27 upstream attempts', () => {
    const { seen } = oneRoot(traffic([naive(3), naive(3), naive(3)]), [{ status: 503, afterMs: 1 }]);
    expect(seen.upstream).toBe(27);
    expect([seen.attemptsAt(0), seen.attemptsAt(1), seen.attemptsAt(2)]).toEqual([3, 9, 27]);
    expect(seen.attempts.filter((a) => a.retry)).toHaveLength(2 + 6 + 18);
    expect(seen.roots).toEqual([expect.objectContaining({ ok: false })]);
  });

  it('stops retrying when an attempt succeeds, and waits the backoff between attempts', () => {
    const { seen, transport } = oneRoot(traffic([naive(3)]), [
      { status: 503, afterMs: 1 },
      { status: 200, afterMs: 1 },
    ]);
    expect(seen.upstream).toBe(2);
    // First answer at 1 ms, then the naive backoff (10 ms), then the retry.
    expect(transport.submitted).toEqual([0, 11]);
    expect(seen.roots).toEqual([{ ok: true, within: true, at: 12 }]);
  });

  it('naive retries every failure, a 400 too; none never retries', () => {
    const naiveRun = oneRoot(traffic([naive(3)]), [{ status: 400, afterMs: 1 }]);
    expect(naiveRun.seen.upstream).toBe(3);
    const noneRun = oneRoot(traffic([none]), [{ status: 400, afterMs: 1 }]);
    expect(noneRun.seen.upstream).toBe(1);
  });

  it('times out a leaf that never answers: cancels the request and reports no answer', () => {
    const { seen, transport } = oneRoot(traffic([naive(2)], { timeoutMs: 100 }), ['hang']);
    expect(transport.cancelled).toEqual([100, 210]);
    expect(seen.statuses).toEqual([STATUS_NO_ANSWER, STATUS_NO_ANSWER]);
    expect(seen.roots).toEqual([{ ok: false, within: true, at: 210 }]);
  });

  it('counts the tokens of an answer that comes after its caller gave up as wasted', () => {
    const { seen } = oneRoot(traffic([none], { timeoutMs: 100 }), [{ status: 200, afterMs: 500, tokens: 42 }], true);
    expect(seen.roots).toEqual([{ ok: false, within: true, at: 100 }]);
    expect(seen.wastedTokens).toBe(42);
    expect(seen.statuses).toEqual([STATUS_NO_ANSWER, 200]);
  });

  it('a root that succeeds after its deadline is done, but not within it', () => {
    const { seen } = oneRoot(traffic([none], { deadlineMs: 50 }), [{ status: 200, afterMs: 80 }]);
    expect(seen.roots).toEqual([{ ok: true, within: false, at: 80 }]);
  });

  it('drives the engine at a layer: with no retry budget a failed call is shed locally, reason budget', () => {
    const config = traffic([{ policy: 'engine', engine: { retryBudget: { ratio: 0, minRetriesPerSec: 0 } } }]);
    const { seen } = oneRoot(config, [{ status: 503, afterMs: 1 }]);
    expect(seen.upstream).toBe(1);
    expect(seen.sheds).toEqual([{ layer: 0, reason: 'budget' }]);
    expect(seen.roots).toEqual([expect.objectContaining({ ok: false })]);
  });

  it('the engine stops at the deadline instead of retrying past it', () => {
    const config = traffic([{ policy: 'engine', engine: { retryBudget: false, backoff: { baseMs: 1000 } } }], {
      deadlineMs: 30,
    });
    const { seen } = oneRoot(config, [{ status: 503, afterMs: 10 }]);
    // The backoff (up to 1 s) does not fit in the 20 ms left after the first answer: fail now.
    expect(seen.upstream).toBe(1);
    expect(seen.roots).toEqual([{ ok: false, within: true, at: 10 }]);
  });
});

describe('TrafficInterpreter: a streamed engine layer with no limits of its own', () => {
  it('abandons a silent first token at the HTTP integrations’ default, as guardedFetch does', () => {
    const config = traffic([{ policy: 'engine', engine: { maxAttempts: 1 } }]);
    config.layers[0] = { ...config.layers[0], stream: true };
    const { seen, transport } = oneRoot(config, ['hang']);
    // The simulated upstream sends a stream's headers with its first token: the header wait (10 s) comes first.
    const expected = Math.min(HTTP_DEFAULTS.stream.headersTimeoutMs, HTTP_DEFAULTS.stream.firstTokenMs);
    expect(expected).toBe(10_000);
    expect(transport.cancelled).toEqual([expected]);
    expect(seen.roots).toEqual([{ ok: false, within: true, at: expected }]);
  });
});
