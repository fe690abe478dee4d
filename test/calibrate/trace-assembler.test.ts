import { describe, expect, it } from 'vitest';
import { Role, type Span } from '../../src/calibrate/span.js';
import { TraceAssembler } from '../../src/calibrate/trace-assembler.js';

const span = (id: string, parent: string, start: number, end: number): Span => ({
  id,
  parent,
  kind: 1,
  start,
  end,
  role: Role.agent,
  name: 'x',
  model: '',
  tool: '',
  agent: '',
  inTok: -1,
  outTok: -1,
  status: 0,
  failed: false,
  errorType: '',
  retryCount: -1,
  retryAfterMs: -1,
  firstTokenMs: -1,
  scope: '',
});

describe('TraceAssembler holds the traces open at once, not the stream', () => {
  it('10,000 traces of 3 spans, one a second: at most the grace window of them open, each handed on whole', () => {
    const got: number[] = [];
    const asm = new TraceAssembler((_, spans) => void got.push(spans.length), 60_000);
    for (let t = 0; t < 10_000; t++) {
      const at = t * 1000;
      // Children first, the root last, as exporters send spans when they end.
      asm.add(`t${t}`, span('b', 'a', at + 1, at + 400));
      asm.add(`t${t}`, span('c', 'a', at + 1, at + 500));
      asm.add(`t${t}`, span('a', '', at, at + 600));
    }
    asm.flush();
    expect(got).toHaveLength(10_000);
    expect(got.every((n) => n === 3)).toBe(true);
    expect(asm.peakOpen).toBeLessThan(1000);
    expect(asm.peakOpen).toBeGreaterThanOrEqual(60);
    expect(asm.peakSpans).toBeLessThan(3000);
  });

  it('a span of a trace already handed on is counted late, not made a trace of its own', () => {
    const got: string[] = [];
    const asm = new TraceAssembler((id) => void got.push(id), 1000);
    asm.add('old', span('a', '', 0, 10));
    for (let i = 0; i < 2048; i++) asm.add(`n${i}`, span('a', '', 5000 + i, 5001 + i));
    asm.add('old', span('b', 'a', 1, 9));
    asm.flush();
    expect(got.filter((id) => id === 'old')).toHaveLength(1);
    expect(asm.lateSpans).toBe(1);
  });
});
