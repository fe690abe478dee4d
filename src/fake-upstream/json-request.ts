import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dialect, Invalid } from './dialect.js';
import type { HttpCounters } from './fake-upstream-stats.js';
import { type BodyResult, readBody, readBodyAsync } from './read-body.js';
import { sendJson } from './send-json.js';

const MALFORMED =
  'We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.';

/** Answers a request the server refuses itself, in `dialect`'s shape, and counts it. */
export type Refuse = (res: ServerResponse, dialect: Dialect, e: Invalid, headers?: Record<string, string>) => void;

export function refuser(counters: HttpCounters): Refuse {
  return (res, dialect, e, headers = {}) => {
    counters.invalid++;
    sendJson(res, e.status, dialect.invalid(e), headers);
  };
}

/** Reads request bodies as JSON, refusing (413, 400) what is too large or not JSON. */
export type ReadJson = (
  req: IncomingMessage,
  res: ServerResponse,
  dialect: Dialect,
) => Promise<{ value: unknown } | undefined>;

/**
 * Reads request bodies as text, refusing (413) what is too large: `then` hears the text, and is
 * not called once the request has been answered (too large) or the client left.
 */
export type ReadText = (
  req: IncomingMessage,
  res: ServerResponse,
  dialect: Dialect,
  then: (text: string) => void,
) => void;

/** Parses a body read as text, refusing (400) what is not JSON. */
export type ParseJson = (res: ServerResponse, dialect: Dialect, text: string) => { value: unknown } | undefined;

/** The request's JSON body, or undefined once it has been answered (too large, malformed) or the client left. */
export function jsonReader(maxBodyBytes: number, refuse: Refuse): ReadJson {
  const parse = jsonParser(refuse);
  return async (req, res, dialect) => {
    const text = bodyText(await readBodyAsync(req, maxBodyBytes), res, dialect, maxBodyBytes, refuse);
    return text === undefined ? undefined : parse(res, dialect, text);
  };
}

/** The request's body as UTF-8 text, handed to `then` unless it was too large (answered 413). */
export function textReader(maxBodyBytes: number, refuse: Refuse): ReadText {
  return (req, res, dialect, then) =>
    readBody(req, maxBodyBytes, (r) => {
      const text = bodyText(r, res, dialect, maxBodyBytes, refuse);
      if (text !== undefined) then(text);
    });
}

/** A body read as text; undefined when the client left or it was too large (then answered 413 and closed). */
function bodyText(
  r: BodyResult,
  res: ServerResponse,
  dialect: Dialect,
  maxBodyBytes: number,
  refuse: Refuse,
): string | undefined {
  if (r.kind === 'aborted') return undefined;
  if (r.kind === 'too-large') {
    refuse(
      res,
      dialect,
      {
        status: 413,
        message: `Request body too large: the limit is ${maxBodyBytes} bytes.`,
        param: null,
        code: 'request_too_large',
      },
      { connection: 'close' },
    );
    return undefined;
  }
  return r.body.toString('utf8');
}

export function jsonParser(refuse: Refuse): ParseJson {
  return (res, dialect, text) => {
    try {
      return { value: JSON.parse(text) };
    } catch {
      refuse(res, dialect, { status: 400, message: MALFORMED, param: null, code: null });
      return undefined;
    }
  };
}
