import { StreamGuard } from '../../src/engine/stream-guard.js';
import type { CommitPolicy } from '../../src/engine/engine-profiles.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlainShape, plainJson } from '../../src/integrations/plain-json.js';
import { SseUsage } from '../../src/integrations/response-usage.js';
import type { StreamProvider } from '../../src/integrations/stream-event.js';
import { StreamGate } from '../../src/integrations/stream-gate.js';
import { build, type Ev, expected, streamArb, type Verdict } from './sse-fuzz-streams.js';

/** A gate on its own state machine, with no limits running (the clock stands at 0). */
function gateOf(commit: CommitPolicy, provider: StreamProvider, usage: SseUsage | undefined): StreamGate {
  const waits = { headersMs: Infinity, firstTokenMs: Infinity, idleMs: Infinity };
  return new StreamGate(new StreamGuard({ waits, commit }, 0), provider, usage, () => 0);
}

/**
 * The stream guard's reading of a stream is exact: whatever the JSON's spacing, key order or
 * escapes, however the bytes are split, LF or CRLF, with comments and keep-alives, it reaches
 * the verdict the stream's own events say (the generator's record of what it wrote is the
 * reference), and its fast path for plain deltas never changes a byte of what the caller gets.
 */

/** The content text of SSE bytes the caller got, read plainly (every event parsed). */
function contentOf(bytes: Uint8Array): string {
  const lines = new TextDecoder().decode(bytes).split(/\r?\n/);
  let text = '';
  let data: string[] = [];
  for (const line of lines.slice(0, -1)) {
    if (line === '') {
      const d = data.join('\n');
      data = [];
      if (d === '' || d === '[DONE]') continue;
      const o = JSON.parse(d);
      if (o.type === 'content_block_delta') text += o.delta.text;
      else if (o.type === 'response.output_text.delta') text += o.delta;
      else if (o.choices?.[0]?.delta?.content) text += o.choices[0].delta.content;
    } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return text;
}

/** The gate's verdict on `bytes` fed in chunks cut at `cuts` (`fast`: with its plain-delta fast path). */
function run(p: StreamProvider, bytes: Uint8Array, cuts: number[], fast: boolean): { v: Verdict; out: Uint8Array } {
  const usage = new SseUsage();
  const g = gateOf('first-token', p, usage);
  if (!fast) (g as unknown as { plain: unknown }).plain = { test: () => false, learn: () => {} };
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    if (c <= at) continue;
    parts.push(...g.push(bytes.slice(at, c)));
    at = c;
  }
  let end: Verdict['end'] = g.status === 'error' ? 'error' : 'complete';
  if (g.status === 'open') {
    const closed = g.close();
    parts.push(...closed.out);
    end = closed.complete ? 'complete' : 'cut';
  }
  if (!g.committed) parts.push(...g.heldBytes());
  const out = Buffer.concat(parts);
  const v: Verdict = {
    end,
    finished: g.finished,
    refusal: g.refusal !== undefined,
    malformed: g.malformed,
    usage: usage.total(),
    text: contentOf(out),
  };
  return { v, out };
}

describe('exact stream parsing', () => {
  it('reaches the events’ own verdict whatever the spacing, key order, escapes, line ends and chunking; the fast path changes no byte', () => {
    fc.assert(
      fc.property(streamArb, ({ p, events: [first, rest], style, cuts }) => {
        const events: Ev[] = [{ k: 'content', text: first }, ...rest];
        const bytes = build(p, events, style);
        const sorted = [...cuts].sort((a, b) => a - b);
        const fast = run(p, bytes, sorted, true);
        const slow = run(p, bytes, sorted, false);
        expect(fast.v).toEqual(expected(p, events));
        expect(Buffer.from(fast.out).equals(Buffer.from(slow.out))).toBe(true);
        expect(slow.v).toEqual(fast.v);
      }),
      { numRuns: 400 },
    );
  });

  it('the same verdict with the stream split at every byte', () => {
    fc.assert(
      fc.property(streamArb, ({ p, events: [first, rest], style }) => {
        const events: Ev[] = [{ k: 'content', text: first }, ...rest.slice(0, 8)];
        const bytes = build(p, events, style);
        const every = Array.from({ length: bytes.length }, (_, i) => i + 1);
        expect(run(p, bytes, every, true).v).toEqual(expected(p, events));
      }),
      { numRuns: 60 },
    );
  });

  it('regression: a finish written with a space after the colon, then a close without [DONE], is complete and its usage read', () => {
    const role = '{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}';
    const token = (t: string) => `{"choices": [{"index": 0, "delta": {"content": "${t}"}, "finish_reason": null}]}`;
    const body = [
      role,
      token('Hel'),
      token('lo'),
      '{"choices":[{"delta":{},"finish_reason": "stop"}]}',
      '{"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}',
    ]
      .map((d) => `data: ${d}\n\n`)
      .join('');
    const bytes = new TextEncoder().encode(body);
    for (const cuts of [[], Array.from({ length: bytes.length }, (_, i) => i + 1)]) {
      const { v } = run('openai', bytes, cuts, true);
      expect(v).toEqual({ end: 'complete', finished: true, refusal: false, malformed: 0, usage: 7, text: 'Hello' });
    }
  });
});

describe('plainJson', () => {
  const scan = (json: string) => {
    const b = Buffer.from(`${json}\n`, 'latin1');
    return plainJson(b, b.toString('latin1'), 0, b.length - 1);
  };

  it('calls plain only well-formed objects with no finish, usage or error, however they are spelt', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (v, spaced) => {
        const json = Buffer.from(JSON.stringify(v, null, spaced ? ' ' : undefined).replace(/\n/g, ' ')).toString(
          'latin1',
        );
        const shape = scan(json);
        if (shape === PlainShape.No) return;
        const o = JSON.parse(Buffer.from(json, 'latin1').toString()) as Record<string, unknown>;
        expect(o !== null && typeof o === 'object' && !Array.isArray(o)).toBe(true);
        const text = JSON.stringify(o);
        for (const key of ['finish_reason', 'stop_reason', 'usage', 'error'])
          expect(new RegExp(`"${key}":(?!null)`).test(text)).toBe(false);
        expect(shape).toBe(
          o.type === undefined
            ? PlainShape.OpenAi
            : o.type === 'content_block_delta'
              ? PlainShape.Anthropic
              : PlainShape.Responses,
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('never calls a text JSON.parse refuses plain', () => {
    const bits = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      '"a"',
      '"b":',
      ':',
      ',',
      ' ',
      '1',
      '-0.5e3',
      '01',
      'null',
      'tru',
      '"\\u12"',
      '"\\x"',
      '\t',
      '"\u0001"',
    );
    fc.assert(
      fc.property(fc.array(bits, { maxLength: 14 }), (parts) => {
        const json = parts.join('');
        if (scan(json) === PlainShape.No) return;
        expect(() => JSON.parse(json)).not.toThrow();
      }),
      { numRuns: 3000 },
    );
  });

  it('finds the watched keys at any depth and spacing, and leaves escaped keys to the parser', () => {
    expect(scan('{"choices":[{"delta":{"content":"x"},"finish_reason":null}]}')).toBe(PlainShape.OpenAi);
    expect(scan('{"choices":[{"delta":{},"finish_reason" :\t"stop"}]}')).toBe(PlainShape.No);
    expect(scan('{"choices":[],"usage" : {"total_tokens":1}}')).toBe(PlainShape.No);
    expect(scan('{"choices":[],"\\u0075sage":{"total_tokens":1}}')).toBe(PlainShape.No);
    expect(scan('{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}')).toBe(PlainShape.Anthropic);
    expect(scan('{"type":"message_delta","delta":{"stop_reason":"end_turn"}}')).toBe(PlainShape.No);
    expect(scan('{"type":"content_block_delt\\u0061"}')).toBe(PlainShape.No);
    expect(scan('{"type":"response.output_text.delta","delta":"x"}')).toBe(PlainShape.Responses);
    expect(scan('{"type":"response.completed","response":{}}')).toBe(PlainShape.No);
    expect(scan('{"error":null,"choices":[]}')).toBe(PlainShape.OpenAi);
    expect(scan('{"choices":[]} x')).toBe(PlainShape.No);
  });
});
