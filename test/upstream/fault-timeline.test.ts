import { describe, it, expect } from 'vitest';
import { FaultCode, FaultTimeline } from '../../src/upstream/fault-timeline.js';
import type { FaultPhase } from '../../src/upstream/config.js';
import { OptionError } from '../../src/engine/errors.js';
import { SeededRandom } from '../../src/engine/random.js';

const MODELS = ['primary', 'fallback'];
const phase = (p: Partial<FaultPhase> & Pick<FaultPhase, 'kind'>): FaultPhase => ({
  fromMs: 0,
  toMs: 1_000,
  rate: 1,
  ...p,
});
const timeline = (faults: FaultPhase[], seed = 1) => new FaultTimeline(faults, MODELS, new SeededRandom(seed));

describe('FaultTimeline', () => {
  it('hits only inside [fromMs, toMs)', () => {
    const t = timeline([phase({ kind: 'outage', fromMs: 100, toMs: 200 })]);
    expect(t.arrival(0, 99)).toBe(-1);
    expect(t.arrival(0, 100)).toBe(0);
    expect(t.arrival(0, 199.9)).toBe(0);
    expect(t.arrival(0, 200)).toBe(-1);
    expect(t.kind(0)).toBe(FaultCode.Outage);
  });

  it('hits only the model it names, all models when it names none', () => {
    const t = timeline([
      phase({ kind: 'reset', model: 'fallback' }),
      phase({ kind: 'hang', fromMs: 2_000, toMs: 3_000 }),
    ]);
    expect(t.arrival(0, 500)).toBe(-1);
    expect(t.arrival(1, 500)).toBe(0);
    expect(t.arrival(0, 2_500)).toBe(1);
    expect(t.arrival(1, 2_500)).toBe(1);
  });

  it('lets the first listed phase win when phases overlap', () => {
    const t = timeline([phase({ kind: 'quota' }), phase({ kind: 'errors' })]);
    expect(t.arrival(0, 10)).toBe(0);
  });

  it('honours rate statistically', () => {
    const t = timeline([phase({ kind: 'errors', rate: 0.25, toMs: Infinity })], 7);
    let hits = 0;
    for (let i = 0; i < 20_000; i++) if (t.arrival(0, i) === 0) hits++;
    expect(hits / 20_000).toBeGreaterThan(0.24);
    expect(hits / 20_000).toBeLessThan(0.26);
  });

  it('draws statuses from weights, and has defaults for errors (500) and outage (503)', () => {
    const t = timeline([
      phase({ kind: 'errors', status: { 503: 3, 429: 1 } }),
      phase({ kind: 'errors' }),
      phase({ kind: 'outage' }),
      phase({ kind: 'outage', status: 502 }),
    ]);
    const counts: Record<number, number> = {};
    for (let i = 0; i < 8_000; i++) {
      const s = t.status(0);
      counts[s] = (counts[s] ?? 0) + 1;
    }
    expect(Object.keys(counts).sort()).toEqual(['429', '503']);
    expect(counts[503] / 8_000).toBeGreaterThan(0.72);
    expect(counts[503] / 8_000).toBeLessThan(0.78);
    expect([t.status(1), t.status(2), t.status(3)]).toEqual([500, 503, 502]);
  });

  it('multiplies the latency factors active at a time, and keeps latency out of arrivals', () => {
    const t = timeline([
      phase({ kind: 'latency', factor: 2 }),
      phase({ kind: 'latency', factor: 3, fromMs: 500, model: 'primary' }),
    ]);
    expect(t.arrival(0, 600)).toBe(-1);
    expect(t.latencyFactor(0, 100)).toBe(2);
    expect(t.latencyFactor(0, 600)).toBe(6);
    expect(t.latencyFactor(1, 600)).toBe(2);
    expect(t.latencyFactor(0, 1_000)).toBe(1);
  });

  it('rejects bad phases with the option named', () => {
    const bad = (p: Partial<FaultPhase>, re: RegExp) => {
      expect(() => timeline([phase({ kind: 'errors', ...p })])).toThrow(OptionError);
      expect(() => timeline([phase({ kind: 'errors', ...p })])).toThrow(re);
    };
    bad({ kind: 'boom' as never }, /upstream\.faults\[0\]\.kind must be one of/);
    bad({ fromMs: 10, toMs: 5 }, /faults\[0\]\.toMs must be a number >= 10, got 5/);
    bad({ rate: 1.5 }, /faults\[0\]\.rate/);
    bad({ factor: 0 }, /faults\[0\]\.factor/);
    bad({ model: 'nope' }, /faults\[0\]\.model must be one of primary, fallback, got "nope"/);
    bad({ status: 42 }, /faults\[0\]\.status/);
    bad({ status: { 503: -1 } }, /faults\[0\]\.status\[503\]/);
    bad({ status: { 503: 0 } }, /weights must add up/);
    bad({ status: {} }, /must be a status or weights/);
  });
});
