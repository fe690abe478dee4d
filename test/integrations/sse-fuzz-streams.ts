import fc from 'fast-check';
import type { StreamProvider } from '../../src/integrations/stream-event.js';

/**
 * Streams for the parser fuzz tests (the stream guard's and the live transport's): logical
 * events written in a dialect with every choice a serializer may make — spacing, key order,
 * escapes, line ends, several `data:` lines, comments and keep-alives — and the verdict the
 * events themselves say, as the reference.
 */

export type Ev =
  | { k: 'content'; text: string }
  | { k: 'finish'; reason: string; n: number }
  | { k: 'usage'; n: number }
  | { k: 'terminal'; n: number }
  | { k: 'error' }
  | { k: 'ping' }
  | { k: 'comment' }
  | { k: 'malformed' };

/** How one stream is written: every choice the serializer makes comes from `rnd`. */
interface Style {
  rnd: () => number;
  /** Share of token boundaries with whitespace, of chars written as \u escapes, of lines ending CRLF. */
  spaces: number;
  escapes: number;
  crlf: number;
  /** Share of whitespace that becomes a line break (a second `data:` line). */
  breaks: number;
  shuffle: boolean;
  eventLines: boolean;
}

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whitespace between two JSON tokens; `\n` stands for a line break, which the framer turns into a new `data:` line. */
function ws(s: Style): string {
  if (s.rnd() >= s.spaces) return '';
  const pick = ['', ' ', '  ', '\t', ' \t '][Math.floor(s.rnd() * 5)];
  return s.rnd() < s.breaks ? `${pick}\n` : pick;
}

function str(v: string, s: Style): string {
  let out = '"';
  for (const ch of v) {
    const code = ch.codePointAt(0)!;
    if (s.rnd() < s.escapes) {
      // Any char may be written as \u escapes (astral ones as a surrogate pair).
      for (let i = 0; i < ch.length; i++) {
        const hex = ch.charCodeAt(i).toString(16).padStart(4, '0');
        out += `\\u${s.rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      }
    } else if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else if (ch === '/' && s.rnd() < 0.3) out += '\\/';
    else out += ch;
  }
  return `${out}"`;
}

function ser(v: unknown, s: Style): string {
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (typeof v === 'string') return str(v, s);
  if (Array.isArray(v)) return `[${ws(s)}${v.map((x) => ser(x, s)).join(`${ws(s)},${ws(s)}`)}${ws(s)}]`;
  const entries = Object.entries(v as Record<string, unknown>);
  if (s.shuffle)
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(s.rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j], entries[i]];
    }
  const body = entries.map(([k, x]) => `${ws(s)}${str(k, s)}${ws(s)}:${ws(s)}${ser(x, s)}${ws(s)}`).join(',');
  return `{${body}}`;
}

/** The event name and data of one logical event, in `p`'s dialect (undefined data: a comment). */
function eventOf(p: StreamProvider, e: Ev, i: number, s: Style): { name?: string; data?: string } {
  const extra = { obfuscation: `o${Math.floor(s.rnd() * 1e6)}`, seq: i };
  if (e.k === 'comment') return {};
  if (e.k === 'malformed') return { data: '{"choices":[{"delta":{"content":"x"}' };
  if (p === 'openai') {
    const choice = (delta: unknown, finish: string | null) => ({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      ...extra,
    });
    switch (e.k) {
      case 'content':
        return { data: ser(choice({ content: e.text }, null), s) };
      case 'finish':
        return { data: ser(choice({}, e.reason), s) };
      case 'usage':
        return {
          data: ser(
            { id: 'c1', choices: [], usage: { prompt_tokens: 1, completion_tokens: e.n - 1, total_tokens: e.n } },
            s,
          ),
        };
      case 'terminal':
        return { data: '[DONE]' };
      case 'error':
        return { data: ser({ error: { message: 'boom', type: 'server_error' } }, s) };
      case 'ping':
        return { data: ser(choice({ role: 'assistant', content: '' }, null), s) };
    }
  }
  if (p === 'anthropic') {
    switch (e.k) {
      case 'content':
        return {
          name: 'content_block_delta',
          data: ser({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: e.text } }, s),
        };
      case 'finish':
        return {
          name: 'message_delta',
          data: ser(
            {
              type: 'message_delta',
              delta: { stop_reason: e.reason, stop_sequence: null },
              usage: { output_tokens: e.n },
            },
            s,
          ),
        };
      case 'usage':
        return {
          name: 'message_start',
          data: ser({ type: 'message_start', message: { id: 'm', usage: { input_tokens: e.n, output_tokens: 1 } } }, s),
        };
      case 'terminal':
        return { name: 'message_stop', data: ser({ type: 'message_stop' }, s) };
      case 'error':
        return { name: 'error', data: ser({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, s) };
      case 'ping':
        return { name: 'ping', data: ser({ type: 'ping' }, s) };
    }
  }
  const response = (n: number, status: string) => ({
    id: 'r',
    status,
    usage: { input_tokens: 1, output_tokens: n - 1, total_tokens: n },
  });
  switch (e.k) {
    case 'content':
      return {
        name: 'response.output_text.delta',
        data: ser({ type: 'response.output_text.delta', item_id: 'i', output_index: 0, delta: e.text, ...extra }, s),
      };
    case 'finish':
      return {
        name: 'response.incomplete',
        data: ser({ type: 'response.incomplete', response: response(e.n, 'incomplete') }, s),
      };
    case 'terminal':
      return {
        name: 'response.completed',
        data: ser({ type: 'response.completed', response: response(e.n, 'completed') }, s),
      };
    case 'error':
      return {
        name: 'response.failed',
        data: ser({ type: 'response.failed', response: { id: 'r', status: 'failed' } }, s),
      };
    default:
      return {
        name: 'response.in_progress',
        data: ser({ type: 'response.in_progress', response: { id: 'r' }, ...extra }, s),
      };
  }
}

function eol(s: Style): string {
  return s.rnd() < s.crlf ? '\r\n' : '\n';
}

/** The stream's bytes: each event framed with its lines, line ends and the blank line after it. */
function write(p: StreamProvider, events: Ev[], s: Style): string {
  let out = '';
  events.forEach((e, i) => {
    const { name, data } = eventOf(p, e, i, s);
    if (data === undefined) {
      out += `: keep-alive${eol(s)}${eol(s)}`;
      return;
    }
    if (name !== undefined && (s.eventLines || p !== 'openai'))
      out += `event:${s.rnd() < 0.8 ? ' ' : ''}${name}${eol(s)}`;
    const lines = data.split('\n');
    for (const line of lines) out += `data:${s.rnd() < 0.8 ? ' ' : ''}${line}${eol(s)}`;
    out += eol(s);
  });
  return out;
}

export interface Verdict {
  end: 'complete' | 'cut' | 'error';
  finished: boolean;
  refusal: boolean;
  malformed: number;
  usage: number | undefined;
  text: string;
}

/** What the events say, read from the generator's record of them. */
export function expected(p: StreamProvider, events: Ev[]): Verdict {
  let text = '';
  let finished = false;
  let refusal = false;
  let malformed = 0;
  let total: number | undefined;
  let input: number | undefined;
  let output: number | undefined;
  for (const e of events) {
    if (e.k === 'malformed') malformed++;
    if (e.k === 'content') text += e.text;
    // OpenAI's usage chunk comes after the finish: it says the answer is over too.
    if (e.k === 'usage' && p === 'openai') (total = e.n), (finished = true);
    if (e.k === 'usage' && p === 'anthropic') (input = e.n), (output = 1);
    if (e.k === 'finish') {
      finished = true;
      // Sticky, as the guard keeps the first refusal it saw.
      if (p === 'openai' ? e.reason === 'content_filter' : p === 'anthropic' && e.reason === 'refusal') refusal = true;
      if (p === 'anthropic') output = e.n;
      if (p === 'responses') return { end: 'complete', finished, refusal: false, malformed, usage: e.n, text };
    }
    if (e.k === 'terminal') {
      const usage = p === 'responses' ? e.n : usageOf(total, input, output);
      return { end: 'complete', finished: finished || p !== 'openai', refusal, malformed, usage, text };
    }
    if (e.k === 'error')
      return { end: 'error', finished, refusal, malformed, usage: usageOf(total, input, output), text };
  }
  return {
    end: finished ? 'complete' : 'cut',
    finished,
    refusal,
    malformed,
    usage: usageOf(total, input, output),
    text,
  };
}

export function usageOf(total: number | undefined, input: number | undefined, output: number | undefined) {
  if (total !== undefined) return total;
  return input === undefined && output === undefined ? undefined : (input ?? 0) + (output ?? 0);
}

const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('{', '}', '[', '"', '\\', '"finish_reason":"stop"', '"usage":{', '\n', 'é☃😀', 'data: [DONE]'),
);
const evArb: fc.Arbitrary<Ev> = fc.oneof(
  { weight: 8, arbitrary: textArb.map((text) => ({ k: 'content' as const, text })) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('finish' as const),
      reason: fc.constantFrom('stop', 'length', 'end_turn', 'content_filter', 'refusal'),
      n: fc.nat(5000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('usage' as const), n: fc.integer({ min: 1, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('terminal' as const), n: fc.integer({ min: 1, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'error' as const }) },
  { weight: 2, arbitrary: fc.constantFrom<Ev>({ k: 'ping' }, { k: 'comment' }) },
  { weight: 1, arbitrary: fc.constant({ k: 'malformed' as const }) },
);
const styleArb = fc.record({
  seed: fc.integer(),
  spaces: fc.constantFrom(0, 0.3, 1),
  escapes: fc.constantFrom(0, 0.1, 1),
  crlf: fc.constantFrom(0, 0.5, 1),
  breaks: fc.constantFrom(0, 0, 0.2),
  shuffle: fc.boolean(),
  eventLines: fc.boolean(),
});
export const streamArb = fc.record({
  p: fc.constantFrom<StreamProvider>('openai', 'anthropic', 'responses'),
  // A content delta first, so most of the rest goes through the fast path.
  events: fc.tuple(
    textArb.filter((t) => t.length > 0),
    fc.array(evArb, { maxLength: 30 }),
  ),
  style: styleArb,
  cuts: fc.array(fc.nat(4000), { maxLength: 12 }),
});

export function build(p: StreamProvider, events: Ev[], st: Omit<Style, 'rnd'> & { seed: number }) {
  const style: Style = { ...st, rnd: mulberry(st.seed) };
  return new TextEncoder().encode(write(p, events, style));
}
