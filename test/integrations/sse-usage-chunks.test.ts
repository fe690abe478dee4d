import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseUsage } from '../../src/integrations/response-usage.js';
import { SseSplitter, sseFields } from '../../src/integrations/sse-splitter.js';

/**
 * `SseUsage.push` skips the splitter for chunks in which no usage can be: its count must be the
 * one a parse of every event gives, however the stream is cut into chunks, LF or CRLF, whatever
 * the text (the word "usage" and `\u` escapes in content included).
 */

/** The reference: the whole stream split into events, every event parsed and observed. */
function reference(bytes: Buffer): number | undefined {
  const u = new SseUsage();
  const s = new SseSplitter();
  const read = (b: Buffer, text: string, start: number, end: number) => {
    const data = sseFields(b, text, start, end).data;
    if (data === undefined || data === '') return;
    try {
      const json = JSON.parse(data);
      if (json !== null && typeof json === 'object') u.observe(json);
    } catch {}
  };
  s.push(bytes, read);
  const rest = s.rest();
  if (rest.length > 0) read(rest, rest.toString('latin1'), 0, rest.length);
  return u.total();
}

const text = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom('usage', ' the usage of', 'é✓', '"usage":', '\n', 'u', 'sage'),
);

/** One event's JSON, and whether it is written with `\u` escapes. */
const eventArb = fc.oneof(
  fc.record({ k: fc.constant('content' as const), t: text }),
  fc.record({ k: fc.constant('openai-usage' as const), n: fc.nat(10_000) }),
  fc.record({ k: fc.constant('anthropic-start' as const), n: fc.nat(10_000) }),
  fc.record({ k: fc.constant('anthropic-delta' as const), n: fc.nat(10_000) }),
  fc.record({ k: fc.constant('responses-completed' as const), n: fc.nat(10_000) }),
  fc.record({ k: fc.constant('comment' as const) }),
  fc.record({ k: fc.constant('done' as const) }),
);

type Ev = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

function json(e: Ev): string | undefined {
  switch (e.k) {
    case 'content':
      return JSON.stringify({ choices: [{ index: 0, delta: { content: e.t }, finish_reason: null }] });
    case 'openai-usage':
      return JSON.stringify({
        choices: [],
        usage: { prompt_tokens: e.n, completion_tokens: 1, total_tokens: e.n + 1 },
      });
    case 'anthropic-start':
      return JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: e.n, output_tokens: 1 } } });
    case 'anthropic-delta':
      return JSON.stringify({ type: 'message_delta', usage: { output_tokens: e.n } });
    case 'responses-completed':
      return JSON.stringify({
        type: 'response.completed',
        response: { usage: { input_tokens: e.n, output_tokens: 2 } },
      });
    default:
      return undefined;
  }
}

/** `\u`-escapes every letter of `usage` keys: JSON lets a key be spelt so, and the reader must still find it. */
const escaped = (s: string) => s.replaceAll('"usage"', '"\\u0075sage"');

function write(events: Ev[], crlf: boolean, escapes: boolean): Buffer {
  const nl = crlf ? '\r\n' : '\n';
  const out: string[] = [];
  for (const e of events) {
    if (e.k === 'comment') out.push(`: keep-alive${nl}${nl}`);
    else if (e.k === 'done') out.push(`data: [DONE]${nl}${nl}`);
    else {
      const j = json(e)!;
      out.push(`data: ${escapes ? escaped(j) : j}${nl}${nl}`);
    }
  }
  return Buffer.from(out.join(''));
}

describe('SseUsage: the usage of a stream, however it is cut into chunks', () => {
  it('equals a parse of every event (fuzzed: events, LF or CRLF, escapes, cuts)', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 30 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(2000), { maxLength: 12 }),
        (events, crlf, escapes, cutsRaw) => {
          const bytes = write(events, crlf, escapes);
          const cuts = [...new Set(cutsRaw.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const u = new SseUsage();
          let at = 0;
          for (const c of [...cuts, bytes.length]) {
            if (c <= at) continue;
            u.push(bytes.subarray(at, c));
            at = c;
          }
          expect(u.total()).toBe(reference(bytes));
        },
      ),
      { numRuns: 2000, seed: 27 },
    );
  });

  it('a usage whose marker or event end is split across chunks, byte by byte', () => {
    const bytes = Buffer.from(
      'data: {"choices":[{"delta":{"content":"x"}}]}\r\n\r\ndata: {"choices":[],"usage":{"total_tokens":42}}\r\n\r\n',
    );
    for (let size = 1; size <= 8; size++) {
      const u = new SseUsage();
      for (let at = 0; at < bytes.length; at += size) u.push(bytes.subarray(at, at + size));
      expect(u.total(), `chunks of ${size}`).toBe(42);
    }
  });
});
