import { StreamGuard } from '../../src/engine/stream-guard.js';
import type { CommitPolicy } from '../../src/engine/engine-profiles.js';
import type { StreamProvider } from '../../src/integrations/stream-event.js';
import { describe, expect, it, vi } from 'vitest';
import { SseUsage } from '../../src/integrations/response-usage.js';
import { SseSplitter, sseFields } from '../../src/integrations/sse-splitter.js';
import { EventFlag, readStreamEvent } from '../../src/integrations/stream-event.js';
import { StreamGate } from '../../src/integrations/stream-gate.js';

/** A gate on its own state machine, with no limits running (the clock stands at 0). */
function gateOf(commit: CommitPolicy, provider: StreamProvider, usage: SseUsage | undefined): StreamGate {
  const waits = { headersMs: Infinity, firstTokenMs: Infinity, idleMs: Infinity };
  return new StreamGate(new StreamGuard({ waits, commit }, 0), provider, usage, () => 0);
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const text = (parts: Uint8Array[]) => parts.map((p) => dec.decode(p)).join('');
const data = (o: unknown) => `data: ${typeof o === 'string' ? o : JSON.stringify(o)}\n\n`;
const chunk = (content: string, finish: string | null = null) => ({
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});
const role = { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };

describe('SseSplitter', () => {
  it('finds whole events across chunk boundaries, LF and CRLF alike, and holds the unfinished one', () => {
    const s = new SseSplitter();
    const seen: string[] = [];
    const on = (b: Buffer, t: string, a: number, z: number) => seen.push(JSON.stringify(sseFields(b, t, a, z)));
    const all = 'event: a\ndata: 1\n\n: comment\r\ndata: 2\r\ndata: 3\r\n\r\ndata: {"x":"é"}\n\ndata: tail';
    const bytes = enc.encode(all);
    // One byte at a time: every boundary falls inside a chunk somewhere.
    for (const b of bytes) s.push(new Uint8Array([b]), on);
    expect(seen).toEqual([
      JSON.stringify({ event: 'a', data: '1' }),
      JSON.stringify({ data: '2\n3' }),
      JSON.stringify({ data: '{"x":"é"}' }),
    ]);
    expect(s.rest().toString()).toBe('data: tail');
  });
});

describe('readStreamEvent', () => {
  const flags = (raw: string, event?: string) => readStreamEvent({ event, data: raw }).flags;
  it('reads OpenAI chat chunks: content, tool calls, finish, usage, [DONE], in-band errors', () => {
    expect(flags(JSON.stringify(role))).toBe(0);
    expect(flags(JSON.stringify(chunk('Hi')))).toBe(EventFlag.Content);
    expect(flags(JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0 }] } }] }))).toBe(EventFlag.Content);
    expect(flags(JSON.stringify(chunk('', 'stop')))).toBe(EventFlag.Finish);
    expect(flags(JSON.stringify({ choices: [], usage: { total_tokens: 3 } }))).toBe(EventFlag.Finish);
    expect(flags('[DONE]')).toBe(EventFlag.Terminal);
    expect(flags('{"error":{"message":"x"}}')).toBe(EventFlag.Error);
  });
  it('reads Anthropic and Responses API events', () => {
    expect(flags('{"type":"message_start","message":{}}')).toBe(0);
    expect(flags('{"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"}}')).toBe(EventFlag.Content);
    expect(flags('{"type":"message_delta","delta":{"stop_reason":"end_turn"}}')).toBe(EventFlag.Finish);
    expect(flags('{"type":"message_stop"}')).toBe(EventFlag.Finish | EventFlag.Terminal);
    expect(flags('{"type":"error","error":{"type":"overloaded_error"}}', 'error')).toBe(EventFlag.Error);
    expect(flags('{"type":"response.output_text.delta","delta":"Hi"}')).toBe(EventFlag.Content);
    expect(flags('{"type":"response.completed","response":{}}')).toBe(EventFlag.Finish | EventFlag.Terminal);
    expect(flags('{"type":"response.failed","response":{}}')).toBe(EventFlag.Error);
  });
  it('calls data that is not a JSON object malformed, and data-less events nothing', () => {
    expect(flags('{"choices":[{"delta":')).toBe(EventFlag.Malformed);
    expect(flags('[1,2]')).toBe(EventFlag.Malformed);
    expect(readStreamEvent({ event: undefined, data: undefined }).flags).toBe(0);
  });
});

describe('StreamGate', () => {
  it('first-token: holds everything before the first content token, then passes events through', () => {
    const g = gateOf('first-token', 'openai', undefined);
    expect(g.push(enc.encode(data(role)))).toEqual([]);
    expect(g.committed).toBe(false);
    const out = g.push(enc.encode(data(chunk('Pa')) + data(chunk('ri'))));
    expect(g.committed).toBe(true);
    expect(text(out)).toBe(data(role) + data(chunk('Pa')) + data(chunk('ri')));
    expect(text(g.push(enc.encode(data(chunk('s', 'stop')) + data('[DONE]') + data(chunk('late')))))).toBe(
      data(chunk('s', 'stop')) + data('[DONE]'),
    );
    expect(g.status).toBe('done');
  });

  it('complete: hands over nothing until the terminal signal, then everything', () => {
    const g = gateOf('complete', 'openai', undefined);
    expect(g.push(enc.encode(data(role) + data(chunk('Hi'))))).toEqual([]);
    expect(g.push(enc.encode(data(chunk('!', 'stop'))))).toEqual([]);
    expect(text(g.push(enc.encode(data('[DONE]'))))).toBe(
      data(role) + data(chunk('Hi')) + data(chunk('!', 'stop')) + data('[DONE]'),
    );
  });

  it('skips and counts a malformed event; an unfinished event never leaks', () => {
    const g = gateOf('first-token', 'openai', undefined);
    const out = g.push(enc.encode(`${data(chunk('A'))}data: {"choices":[{"de\n\n${data(chunk('B'))}data: {"cho`));
    expect(text(out)).toBe(data(chunk('A')) + data(chunk('B')));
    expect(g.malformed).toBe(1);
  });

  it('after the first token, deltas are checked without a parse yet still caught when truncated', () => {
    const g = gateOf('first-token', 'openai', undefined);
    g.push(enc.encode(data(chunk('A'))));
    const truncated = 'data: {"choices":[{"delta":{"content":"x"},"finish_reason":null}\n\n';
    const brace = data({ choices: [{ index: 0, delta: { content: '{' }, finish_reason: null }] });
    const out = g.push(enc.encode(data(chunk('B')) + truncated + brace + data(chunk('', 'stop'))));
    expect(text(out)).toBe(data(chunk('B')) + brace + data(chunk('', 'stop')));
    expect(g.malformed).toBe(1);
    expect(g.finished).toBe(true);
  });

  it('after the first token, a delta written like the one before passes with no parse; any other change is read', () => {
    const g = gateOf('first-token', 'openai', undefined);
    g.push(enc.encode(data(chunk('A'))));
    const like = (raw: string) => data(chunk('X')).replace('"X"', `"${raw}"`);
    // Text that the bracket check alone would have to parse: brackets, quotes, escapes, UTF-8.
    const texts = ['{', '[x', 'say \\"hi\\"', 'é ☃ \\u00e9', '\\n\\t', ''].map(like);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const out = g.push(enc.encode(texts.join('')));
      expect(parse).not.toHaveBeenCalled();
      expect(text(out)).toBe(texts.join(''));
    } finally {
      parse.mockRestore();
    }
    // Same bytes around other text, but not a JSON string: read, and skipped as malformed.
    const bad = [like('a"b'), like('bad \\x escape'), like('cut \\u00')];
    expect(text(g.push(enc.encode(bad.join('') + data(chunk('B')))))).toBe(data(chunk('B')));
    expect(g.malformed).toBe(3);
    // A finish in the same shape otherwise is read as a finish.
    g.push(enc.encode(data(chunk('', 'stop'))));
    expect(g.finished).toBe(true);
  });

  it('a clean close is complete after a finish without [DONE], a cut without one', () => {
    const finished = gateOf('first-token', 'openai', undefined);
    finished.push(enc.encode(data(chunk('A')) + data(chunk('', 'stop'))));
    expect(finished.close().complete).toBe(true);
    const cut = gateOf('first-token', 'openai', undefined);
    cut.push(enc.encode(data(chunk('A'))));
    expect(cut.close().complete).toBe(false);
  });

  it('stops at a provider error event and says so', () => {
    const g = gateOf('first-token', 'anthropic', undefined);
    const err = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n';
    expect(g.push(enc.encode(err))).toEqual([]);
    expect(g.status).toBe('error');
    expect(g.upstreamError).toMatchObject({ error: { type: 'overloaded_error' } });
  });

  it('writes the in-band error event in the dialect the stream showed', () => {
    const g = gateOf('first-token', 'openai', undefined);
    g.push(enc.encode('event: message_start\ndata: {"type":"message_start","message":{}}\n\n'));
    expect(g.errorEvent('stream_cut', 'cut').toString()).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"cut (stream_cut)"}}\n\n',
    );
  });

  it('reads usage from the events it parses', () => {
    const usage = new SseUsage();
    const g = gateOf('first-token', 'openai', usage);
    g.push(enc.encode(data(chunk('A')) + data({ choices: [], usage: { total_tokens: 42 } }) + data('[DONE]')));
    expect(usage.total()).toBe(42);
  });
});
