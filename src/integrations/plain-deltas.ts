/** Event openings of content deltas: OpenAI chat chunks, Anthropic and Responses text deltas. */
const OPENINGS = [
  'data: {',
  'event: content_block_delta\ndata: {"type":"content_block_delta"',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta"',
];

/** Text that makes an OpenAI chunk more than a delta: a finish, a usage, an error. */
const MARKERS = ['"finish_reason":"', '"usage":{', '"error"'];

/**
 * Recognises, without parsing, the bulk of a stream once its first token is in: content deltas
 * that say nothing about the stream's state. Parsing every delta would cost the stream guard
 * most of its throughput, and after the first token it needs nothing from a delta but that it
 * is whole. A plain delta is one `data:` line (after its `event:` line for Anthropic and the
 * Responses API) holding `{ … }` with as many closing brackets as opening ones — which a
 * truncated or garbled event has not — and none of the markers of a finish, a usage or an
 * error (quotes inside JSON strings are escaped, so no text can look like one). Anything else,
 * a delta whose text holds an unmatched bracket included, is parsed. Searches the latin1 text of
 * the bytes (one char per byte; UTF-8 sequences never hold an ASCII byte).
 */
export class PlainDeltas {
  private text: string | undefined = undefined;
  /** Sorted offsets of markers in `text`. */
  private marks: number[] = [];
  private next = 0;

  test(buf: Uint8Array, text: string, start: number, stop: number): boolean {
    if (text !== this.text) this.scan(text);
    // Events come in order: skip marks before this one; one inside it makes it not plain.
    const marks = this.marks;
    while (this.next < marks.length && marks[this.next] < start) this.next++;
    if (this.next < marks.length && marks[this.next] < stop) return false;
    const data = opening(text, start, stop);
    if (data < 0) return false;
    // One line, `{` … `}`, then the blank line.
    const end = stop - 2;
    if (text.charCodeAt(end) !== 0x0a || text.charCodeAt(end + 1) !== 0x0a || text.charCodeAt(end - 1) !== 0x7d)
      return false;
    // Bytes, not chars: a typed-array loop is a few times faster than charCodeAt.
    let curly = 1;
    let square = 0;
    for (let i = data; i < end; i++) {
      const c = buf[i];
      if (c > 0x7d || c < 0x5b) {
        if (c === 0x0a) return false;
      } else if (c === 0x7b) curly++;
      else if (c === 0x7d) curly--;
      else if (c === 0x5b) square++;
      else if (c === 0x5d) square--;
    }
    return curly === 0 && square === 0;
  }

  private scan(text: string): void {
    this.text = text;
    this.next = 0;
    const marks: number[] = [];
    for (const m of MARKERS) for (let i = text.indexOf(m); i >= 0; i = text.indexOf(m, i + 1)) marks.push(i);
    this.marks = marks.length > 1 ? marks.sort((a, b) => a - b) : marks;
  }
}

/** The offset just after the opening `{` of a plain delta's data, or −1. */
function opening(text: string, start: number, stop: number): number {
  for (let k = 0; k < OPENINGS.length; k++) {
    const o = OPENINGS[k];
    if (stop - start > o.length && text.startsWith(o, start)) return start + o.length;
  }
  return -1;
}
