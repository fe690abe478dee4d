import { beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceResult, runConformance } from '../../bench/conformance-matrix.js';

// The conformance matrix (README, "Conformance: each fault × what the engine does") on the real
// clock against a fake upstream on port 0: outcomes and attempt counts, never times.

let results: ConformanceResult[] = [];
beforeAll(async () => {
  results = await runConformance();
}, 90_000);

const row = (name: string, stream = true): ConformanceResult => {
  const r = results.find((x) => x.name === name && x.stream === stream);
  if (r === undefined) throw new Error(`no conformance row ${name} (${stream ? 'stream' : 'json'})`);
  return r;
};

/** [primary, fallback, long] attempts, who answered, and the outcome's kind, per case. */
const EXPECTED: Array<[string, boolean, [number, number, number], string | undefined, string]> = [
  ['none (healthy)', true, [1, 0, 0], 'primary', 'complete'],
  ['none (healthy)', false, [1, 0, 0], 'primary', 'complete'],
  ['429 retry-after 300 ms', true, [3, 1, 0], 'fallback', 'complete'],
  ['429 retry-after 300 ms', false, [3, 1, 0], 'fallback', 'complete'],
  ['503 outage', true, [3, 1, 0], 'fallback', 'complete'],
  ['503 outage', false, [3, 1, 0], 'fallback', 'complete'],
  ['500 errors', true, [3, 1, 0], 'fallback', 'complete'],
  ['500 errors', false, [3, 1, 0], 'fallback', 'complete'],
  ['connection reset', true, [3, 1, 0], 'fallback', 'complete'],
  ['connection reset', false, [3, 1, 0], 'fallback', 'complete'],
  ['silent provider (hang before headers)', true, [1, 1, 0], 'fallback', 'complete'],
  ['silent provider (hang before headers)', false, [1, 1, 0], 'fallback', 'complete'],
  ['slow first token (3 s)', true, [1, 1, 0], 'fallback', 'complete'],
  ['stall after 5 tokens', true, [1, 0, 0], 'primary', 'error'],
  ['cut after 5 tokens', true, [1, 0, 0], 'primary', 'error'],
  ["cut after 5 tokens, commit: 'complete'", true, [3, 1, 0], 'fallback', 'complete'],
  ["stall after 5 tokens, commit: 'complete'", true, [1, 1, 0], 'fallback', 'complete'],
  ['cut after 5 tokens, fallback continues', true, [1, 1, 0], 'primary', 'complete'],
  ['stall after 5 tokens, fallback continues', true, [1, 1, 0], 'primary', 'complete'],
  ['cut after 5, fallback continues but rejects the prefill', true, [1, 1, 0], 'primary', 'error'],
  ['malformed event', true, [1, 0, 0], 'primary', 'complete'],
  ['missing [DONE]', true, [1, 0, 0], 'primary', 'complete'],
  ['mid-stream error', true, [1, 0, 0], 'primary', 'error'],
  ['content filter (finish)', true, [1, 0, 0], 'primary', 'complete'],
  ['content filter (400)', true, [1, 0, 0], 'primary', 'error'],
  ['content filter (400)', false, [1, 0, 0], 'primary', 'error'],
  ['context length', true, [1, 0, 1], 'long', 'complete'],
  ['context length', false, [1, 0, 1], 'long', 'complete'],
];

describe('conformance: each fault on the primary × what guardedFetch + the OpenAI SDK get', () => {
  it('covers every case of the matrix, and no caller ever takes a cut answer as a success', () => {
    expect(results).toHaveLength(EXPECTED.length);
    expect(results.filter((r) => r.outcome.kind === 'truncated').map((r) => r.name)).toEqual([]);
  });

  it.each(EXPECTED)('%s (stream: %s): attempts, who answered, outcome', (name, stream, attempts, target, kind) => {
    const r = row(name, stream);
    expect([r.attempts.primary, r.attempts.fallback, r.attempts.long]).toEqual(attempts);
    expect(r.target).toBe(target);
    expect(r.outcome.kind).toBe(kind);
  });

  it('a content filter is neither retried nor failed over, and the caller gets the reason', () => {
    expect(row('content filter (400)', false).outcome).toEqual({ kind: 'error', status: 400, code: 'content_filter' });
    expect(row('content filter (finish)').outcome).toEqual({ kind: 'complete', finish: 'content_filter' });
  });

  it('a context-length error goes to the larger window, skipping the equal one', () => {
    for (const stream of [true, false]) expect(row('context length', stream).attempts.fallback).toBe(0);
  });

  it('a silent provider is answered by the fallback after one attempt, not retried on the same target', () => {
    for (const stream of [true, false]) {
      const r = row('silent provider (hang before headers)', stream);
      expect(r.attempts.primary).toBe(1);
      expect(r.target).toBe('fallback');
    }
  });

  it('after a cut the fallback gets the original request (no model here takes a prefill: one would be a 400)', () => {
    expect(row("cut after 5 tokens, commit: 'complete'").outcome).toEqual({
      kind: 'complete',
      finish: 'stop',
    });
  });

  it('a break after commit is continued where the fallback declares continuation; a rejected prefill leaves the original break', () => {
    expect(row('cut after 5 tokens, fallback continues').outcome).toEqual({
      kind: 'complete',
      finish: 'stop',
      resumed: 1,
    });
    expect(row('stall after 5 tokens, fallback continues').outcome).toEqual({
      kind: 'complete',
      finish: 'stop',
      resumed: 1,
    });
    expect(row('cut after 5, fallback continues but rejects the prefill').outcome).toMatchObject({
      kind: 'error',
      code: 'stream_cut',
    });
  });

  it('a break after the first token ends the stream with an error, never a clean end', () => {
    expect(row('cut after 5 tokens').outcome).toMatchObject({ kind: 'error', code: 'stream_cut' });
    expect(row('stall after 5 tokens').outcome).toMatchObject({ kind: 'error', code: 'stream_stall' });
  });
});
