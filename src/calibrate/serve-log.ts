import { CalibrateError } from './calibrate-error.js';
import { readLines } from './line-reader.js';
import { Reservoir } from './reservoir.js';

/** One model's requests as the server saw them. */
export class ServedModel {
  requests = 0;
  /** By outcome: the HTTP status (`200`, `429`), or `error` for no answer (a reset, the client gone first). */
  readonly statuses = new Map<string, number>();
  /** Successful requests' latency at the server, ms (arrival to the end of the answer). */
  readonly latency = new Reservoir(4096);
  /** Requests and failed ones per second (epoch seconds of arrival). */
  readonly bins = new Map<number, [number, number]>();
}

/**
 * What `stormlab serve --log` files say (one JSON line per model request: time, route, model,
 * retry count, status, fault, latency): per model, statuses, the server's latency, and
 * requests and failures per second. It has no trace ids or tokens: the tree comes from the
 * traces, and this refines the upstream's errors and says its own latency.
 */
export class ServeLog {
  readonly files: string[] = [];
  requests = 0;
  readonly models = new Map<string, ServedModel>();
  first = Number.POSITIVE_INFINITY;
  last = Number.NEGATIVE_INFINITY;
}

type Json = Record<string, unknown>;

function entryError(label: string, line: number, what: string): CalibrateError {
  return new CalibrateError(
    `${label}:${line}: not a stormlab serve --log line (${what}): expected {"time": ISO 8601, "route", "model", "status": a number, "latencyMs": a number, …}`,
  );
}

/** Reads one `serve --log` file into `into`, streamed a line at a time. */
export function readServeLog(path: string, label: string, into: ServeLog): void {
  into.files.push(label);
  let lines = 0;
  readLines(path, label, (line, lineNo) => {
    const t = line.trim();
    if (t === '') return;
    let e: unknown;
    try {
      e = JSON.parse(t);
    } catch {
      throw entryError(label, lineNo, 'not JSON');
    }
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw entryError(label, lineNo, 'not an object');
    const { time, status, latencyMs, model } = e as Json;
    if ((e as Json).resourceSpans !== undefined)
      throw new CalibrateError(
        `${label}:${lineNo}: OTLP traces, not a serve log: name trace files without --serve-log`,
      );
    const at = typeof time === 'string' ? Date.parse(time) : Number.NaN;
    if (!Number.isFinite(at)) throw entryError(label, lineNo, 'no time');
    if (typeof status !== 'number' || !Number.isInteger(status)) throw entryError(label, lineNo, 'no status');
    if (typeof latencyMs !== 'number' || !(latencyMs >= 0)) throw entryError(label, lineNo, 'no latencyMs');
    lines++;
    const name = typeof model === 'string' ? model : '(no model)';
    let m = into.models.get(name);
    if (m === undefined) into.models.set(name, (m = new ServedModel()));
    const failed = status === 0 || status >= 400;
    const key = status === 0 ? 'error' : String(status);
    m.requests++;
    m.statuses.set(key, (m.statuses.get(key) ?? 0) + 1);
    if (!failed) m.latency.add(latencyMs);
    into.requests++;
    const k = Math.floor(at / 1000);
    let b = m.bins.get(k);
    if (b === undefined) m.bins.set(k, (b = [0, 0]));
    b[0]++;
    if (failed) b[1]++;
    if (at < into.first) into.first = at;
    if (at > into.last) into.last = at;
  });
  if (lines === 0) throw new CalibrateError(`${label}: empty file, no requests in it`);
}
