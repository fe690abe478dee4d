import { CalibrateError } from './calibrate-error.js';
import { readLines } from './line-reader.js';
import { spanOf } from './otlp-span.js';
import type { Span } from './span.js';

/**
 * The most one OTLP document (a JSON body, or one line of a JSON Lines file) may take: a
 * document is parsed whole, so this bounds what a single one costs. The Collector's file
 * exporter writes one batch per line, far smaller.
 */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

export type SpanSink = (traceId: string, span: Span) => void;

type Json = Record<string, unknown>;

/** Where a span sits in its document, said only when something is wrong with it. */
function where(file: string, line: number, r: number, s: number, i: number): string {
  return `${file}:${line}: resourceSpans[${r}].scopeSpans[${s}].spans[${i}]`;
}

/** Hands every span of one OTLP/HTTP JSON body (an ExportTraceServiceRequest) to `sink`; returns how many. */
function readDocument(doc: unknown, file: string, line: number, sink: SpanSink): number {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || !Array.isArray((doc as Json).resourceSpans))
    throw new CalibrateError(
      `${file}:${line}: not OTLP trace JSON: expected an ExportTraceServiceRequest ({"resourceSpans": [...]})`,
    );
  let n = 0;
  const rs = (doc as Json).resourceSpans as unknown[];
  for (let r = 0; r < rs.length; r++) {
    const res = rs[r] as Json | null;
    const scopes = res?.scopeSpans ?? res?.instrumentationLibrarySpans;
    if (!Array.isArray(scopes)) continue;
    for (let s = 0; s < scopes.length; s++) {
      const sc = scopes[s] as Json | null;
      const scope = ((sc?.scope ?? sc?.instrumentationLibrary) as Json | undefined)?.name;
      const spans = sc?.spans;
      if (!Array.isArray(spans)) continue;
      for (let i = 0; i < spans.length; i++) {
        const raw = spans[i];
        if (raw === null || typeof raw !== 'object')
          throw new CalibrateError(`${where(file, line, r, s, i)}: expected a span object`);
        const { traceId, span } = spanOf(raw as Json, typeof scope === 'string' ? scope : '', () =>
          where(file, line, r, s, i),
        );
        sink(traceId, span);
        n++;
      }
    }
  }
  return n;
}

interface Nesting {
  /** The open brackets, innermost last (123 \`{\`, 91 \`[\`). */
  open: number[];
  inString: boolean;
  escaped: boolean;
  /** A closing bracket that does not match the open one: not JSON. */
  broken: boolean;
}

const nesting = (): Nesting => ({ open: [], inString: false, escaped: false, broken: false });

/** Follows JSON nesting through `text` (strings and escapes understood), to find where a multi-line document ends. */
function scan(text: string, state: Nesting): void {
  for (let i = 0; i < text.length && !state.broken; i++) {
    const c = text.charCodeAt(i);
    if (state.inString) {
      if (state.escaped) state.escaped = false;
      else if (c === 92) state.escaped = true;
      else if (c === 34) state.inString = false;
    } else if (c === 34) state.inString = true;
    else if (c === 123 || c === 91) state.open.push(c);
    else if (c === 125 || c === 93) {
      const top = state.open.pop();
      if (top !== (c === 125 ? 123 : 91)) state.broken = true;
    }
  }
}

export interface FileRead {
  documents: number;
  spans: number;
}

/**
 * Streams one file of OTLP JSON traces: JSON Lines of ExportTraceServiceRequests (what the
 * Collector's file exporter writes), one such body, or several one after the other,
 * pretty-printed or not. It reads a chunk at a time and parses one document at a time, so
 * what it holds is one document; the spans go to `sink` as they are read.
 */
export function readOtlpFile(path: string, file: string, sink: SpanSink): FileRead {
  // A document spread over lines: its lines so far, its first line, its nesting.
  let pending: string[] = [];
  let pendingBytes = 0;
  let pendingLine = 0;
  let state = nesting();
  const out: FileRead = { documents: 0, spans: 0 };
  let sawText = false;

  const take = (doc: unknown, line: number): void => {
    out.spans += readDocument(doc, file, line, sink);
    out.documents++;
  };
  const parse = (text: string, line: number): void => {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new CalibrateError(`${file}:${line}: not JSON (${(e as Error).message})`);
    }
    take(doc, line);
  };

  const onLine = (line: string, lineNo: number): void => {
    if (pending.length === 0) {
      const t = line.trim();
      if (t === '') return;
      sawText = true;
      const first = t.charCodeAt(0);
      if (first !== 123 && first !== 91)
        throw new CalibrateError(
          `${file}:${lineNo}: not OTLP trace JSON: expected a JSON object, got ${JSON.stringify(t.slice(0, 20))}`,
        );
      // The common case, a whole document on its line (JSON Lines): parsed at once; only a line
      // that does not parse is scanned, to tell a document going on below from a broken one.
      if (t.charCodeAt(t.length - 1) === 125) {
        let doc: unknown;
        try {
          doc = JSON.parse(t);
        } catch (e) {
          const probe = nesting();
          scan(t, probe);
          if (probe.broken || (probe.open.length === 0 && !probe.inString))
            throw new CalibrateError(`${file}:${lineNo}: not JSON (${(e as Error).message})`);
        }
        if (doc !== undefined) return take(doc, lineNo);
      }
      state = nesting();
      pendingLine = lineNo;
    }
    pending.push(line);
    pendingBytes += line.length;
    if (pendingBytes > MAX_DOCUMENT_BYTES)
      throw new CalibrateError(
        `${file}:${pendingLine}: one OTLP document over ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB: write the traces as JSON Lines (one batch a line, as the Collector's file exporter does)`,
      );
    scan(line, state);
    if (state.broken || (state.open.length === 0 && !state.inString)) {
      const text = pending.join('\n');
      pending = [];
      pendingBytes = 0;
      state = nesting();
      parse(text, pendingLine);
    }
  };

  readLines(path, file, onLine);
  if (pending.length > 0)
    throw new CalibrateError(`${file}:${pendingLine}: the JSON document starting here never ends`);
  if (!sawText) throw new CalibrateError(`${file}: empty file, no traces in it`);
  return out;
}
