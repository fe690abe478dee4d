import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamScan } from '../../../src/run/live/wire-format.js';
import { build, type Ev, streamArb, usageOf } from '../../integrations/sse-fuzz-streams.js';

/**
 * The live transport reads a stream by structure (`StreamScan`): whatever the JSON's spacing,
 * key order or escapes, however the bytes are split, LF or CRLF, with comments, keep-alives and
 * malformed events, it reaches the verdict the events themselves say — content, finish, how it
 * ended, the usage — as the generator recorded them.
 */

interface ScanVerdict {
  content: boolean;
  finished: boolean;
  ended: boolean;
  errored: boolean;
  tokens: number;
}

/** What the events say, up to the first end marker or error event (nothing after it is read). */
function reference(p: 'openai' | 'anthropic', events: Ev[]): ScanVerdict {
  const v: ScanVerdict = { content: false, finished: false, ended: false, errored: false, tokens: -1 };
  let total: number | undefined;
  let input: number | undefined;
  let output: number | undefined;
  for (const e of events) {
    // An Anthropic content_block_delta is a content delta whatever its text; an OpenAI delta needs text.
    if (e.k === 'content' && (p === 'anthropic' || e.text.length > 0)) v.content = true;
    if (e.k === 'finish') {
      v.finished = true;
      if (p === 'anthropic') output = e.n;
    }
    if (e.k === 'usage') {
      if (p === 'openai') (total = e.n), (v.finished = true);
      else (input = e.n), (output = 1);
    }
    if (e.k === 'terminal') {
      v.ended = true;
      // message_stop says the message is finished too.
      if (p === 'anthropic') v.finished = true;
      break;
    }
    if (e.k === 'error') {
      v.errored = true;
      break;
    }
  }
  v.tokens = usageOf(total, input, output) ?? -1;
  return v;
}

function scan(p: 'openai' | 'anthropic', bytes: Uint8Array, cuts: number[]): ScanVerdict {
  const s = new StreamScan(p);
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    if (c <= at) continue;
    s.push(bytes.subarray(at, c));
    at = c;
  }
  return { content: s.content, finished: s.finished, ended: s.ended, errored: s.errored, tokens: s.tokens() };
}

const liveStreams = streamArb.filter((x) => x.p !== 'responses');

describe('StreamScan: the live transport reads streams by structure', () => {
  it('reaches the events’ own verdict whatever the spacing, key order, escapes, line ends and chunking', () => {
    fc.assert(
      fc.property(liveStreams, fc.boolean(), ({ p, events: [first, rest], style, cuts }, leadingContent) => {
        const events: Ev[] = [...(leadingContent ? [{ k: 'content' as const, text: first }] : []), ...rest];
        const api = p as 'openai' | 'anthropic';
        const bytes = build(api, events, style);
        expect(
          scan(
            api,
            bytes,
            [...cuts].sort((a, b) => a - b),
          ),
        ).toEqual(reference(api, events));
      }),
      { numRuns: 400 },
    );
  });

  it('the same verdict with the stream split at every byte', () => {
    fc.assert(
      fc.property(liveStreams, ({ p, events: [first, rest], style }) => {
        const events: Ev[] = [{ k: 'content', text: first }, ...rest.slice(0, 8)];
        const api = p as 'openai' | 'anthropic';
        const bytes = build(api, events, style);
        const every = Array.from({ length: bytes.length }, (_, i) => i + 1);
        expect(scan(api, bytes, every)).toEqual(reference(api, events));
      }),
      { numRuns: 60 },
    );
  });

  it('regression: a finish and a usage written with a space after the colon are read (no [DONE])', () => {
    const token = (t: string) => `{"choices": [{"index": 0, "delta": {"content": "${t}"}, "finish_reason": null}]}`;
    const body = [
      token('Hel'),
      token('lo'),
      '{"choices":[{"delta":{},"finish_reason": "stop"}]}',
      '{"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}',
    ]
      .map((d) => `data: ${d}\n\n`)
      .join('');
    expect(scan('openai', Buffer.from(body), [])).toEqual({
      content: true,
      finished: true,
      ended: false,
      errored: false,
      tokens: 7,
    });
  });

  it('text that looks like a marker inside a content delta is text, not a marker', () => {
    const body = ['"[DONE]"', '"{\\"error\\":1}"', '"\\"finish_reason\\":\\"stop\\""']
      .map((t) => `data: {"choices":[{"index":0,"delta":{"content":${t}},"finish_reason":null}]}\n\n`)
      .join('');
    expect(scan('openai', Buffer.from(body), [])).toEqual({
      content: true,
      finished: false,
      ended: false,
      errored: false,
      tokens: -1,
    });
  });
});
