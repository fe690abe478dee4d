/** One server-sent event: its `event:` name and joined `data:` lines (undefined when absent). */
export interface SseEvent {
  event: string | undefined;
  data: string | undefined;
}

const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const EMPTY = Buffer.alloc(0);

/**
 * Splits a server-sent event stream into whole events, chunk by chunk, working on bytes: an
 * event ends at a blank line (`\n\n` or `\r\n\r\n`), and a newline byte never occurs inside a
 * UTF-8 sequence, so no decoding is needed to find the boundaries. Bytes of an event that has
 * not ended yet are held until it does, so a consumer never sees half an event.
 *
 * `push` calls `onEvent(buf, start, end)` for each complete event, where `buf[start..end)` are
 * its raw bytes (blank-line terminator included); `fields` reads the event from that range.
 */
export class SseSplitter {
  private held: Buffer = EMPTY;
  /** Where the scan of `held` resumes: the start of its last, unfinished line. */
  private lineAt = 0;
  /** Events dropped unfinished for being larger than `MAX_EVENT_BYTES`. */
  dropped = 0;

  /**
   * Feeds one chunk. Returns the buffer the event ranges refer to and the offset after the last
   * complete event in it (the bytes before it were all given to `onEvent`, or are blank lines).
   * `onEvent` also gets the buffer as a latin1 string (one char per byte, so offsets agree):
   * scanning a string stays inside the JIT, where scanning a Buffer crosses into C++ each call.
   */
  push(
    chunk: Uint8Array,
    onEvent: (buf: Buffer, text: string, start: number, end: number) => void,
  ): { buf: Buffer; end: number } {
    const c = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buf = this.held.length === 0 ? c : Buffer.concat([this.held, c]);
    const text = buf.toString('latin1');
    let eventAt = 0;
    // Always the start of a line: the scan never takes a line's own end for a blank line.
    let pos = this.held.length === 0 ? 0 : this.lineAt;
    if (text.indexOf('\r', pos) < 0) {
      // The common case, LF only: jump from blank line to blank line. A blank line at `pos`
      // shows as the LF before it (the last line's end, held from the chunk before) and its own.
      for (let nl = text.indexOf('\n\n', pos > eventAt ? pos - 1 : pos); nl >= 0; nl = text.indexOf('\n\n', pos)) {
        pos = nl + 2;
        if (nl > eventAt) onEvent(buf, text, eventAt, pos);
        eventAt = pos;
      }
      // Resume at the start of the unfinished line.
      pos = Math.max(eventAt, text.lastIndexOf('\n') + 1);
    } else {
      for (let nl = text.indexOf('\n', pos); nl >= 0; nl = text.indexOf('\n', pos)) {
        const blank = nl === pos || (nl === pos + 1 && text.charCodeAt(pos) === CR);
        pos = nl + 1;
        if (!blank) continue;
        // A blank line right after another (or at the start) ends no event: it rides along.
        if (nl > eventAt && !(nl === eventAt + 1 && text.charCodeAt(eventAt) === CR)) onEvent(buf, text, eventAt, pos);
        eventAt = pos;
      }
      // Resume at the start of the unfinished line.
    }
    this.held = eventAt === buf.length ? EMPTY : buf.subarray(eventAt);
    this.lineAt = pos - eventAt;
    // A line that never ends is not an event anyone can use; bound what is held for it.
    if (this.held.length > MAX_EVENT_BYTES) {
      this.held = EMPTY;
      this.lineAt = 0;
      this.dropped++;
    }
    return { buf, end: eventAt };
  }

  /** The bytes of an event that had not ended when the stream did (empty when none). */
  rest(): Buffer {
    return this.held;
  }
}

/** An event larger than this is dropped whole (and, being unfinished, never forwarded). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Reads the `event:` and `data:` fields of `buf[start..end)` (`text` is `buf` in latin1);
 * comments and other fields are skipped. Data is decoded as UTF-8.
 */
export function sseFields(buf: Buffer, text: string, start: number, end: number): SseEvent {
  let event: string | undefined;
  let data: string | undefined;
  let pos = start;
  while (pos < end) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0 || nl > end) nl = end;
    const lineEnd = nl > pos && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
    if (lineEnd > pos && text.charCodeAt(pos) !== COLON) {
      let colon = text.indexOf(':', pos);
      if (colon < 0 || colon > lineEnd) colon = lineEnd;
      let valueAt = colon + 1;
      if (valueAt < lineEnd && text.charCodeAt(valueAt) === SPACE) valueAt++;
      const name = colon - pos === 4 || colon - pos === 5 ? text.slice(pos, colon) : '';
      if (name === 'data') {
        const value = valueAt >= lineEnd ? '' : buf.toString('utf8', valueAt, lineEnd);
        data = data === undefined ? value : `${data}\n${value}`;
      } else if (name === 'event') {
        event = valueAt >= lineEnd ? '' : buf.toString('utf8', valueAt, lineEnd);
      }
    }
    pos = nl + 1;
  }
  return { event, data };
}
