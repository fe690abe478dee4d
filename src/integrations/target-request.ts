import type { Target, TargetSpec } from '../engine/target.js';

/** A request as a target's `rewrite` sees it and returns it. */
export interface HttpRequest {
  /** The URL the attempt goes to: the target's origin (when it has one), the request's path. */
  url: string;
  method: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** The JSON body, its `model` already the target's; undefined when the body is not JSON. */
  json: unknown;
}

/**
 * A fallback target of the HTTP integrations: a string is an origin; an object can name an
 * `origin` (scheme://host[:port]), a `model` (the JSON body's `model` is rewritten — OpenAI and
 * Anthropic bodies alike), a `contextWindow`, and a `rewrite` for any other shape (another
 * provider's body, its auth header). Every attempt starts from the caller's original request.
 */
export interface HttpTargetSpec extends TargetSpec {
  rewrite?(request: HttpRequest, target: Target): HttpRequest;
}

export type HttpTarget = string | HttpTargetSpec;

/** What one attempt sends: its URL, and a new body and headers when the target changed them. */
export interface TargetedRequest {
  url: string;
  /** A new body (the model or `rewrite` changed it), or undefined to send the original. */
  body: string | undefined;
  /** New headers (from `rewrite`), or undefined to send the original. */
  headers: Record<string, string> | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The request for `target`: its origin in place of the request's, its model in the body, then
 * its `rewrite`. Never more than that: a fallback is not told what an earlier attempt said.
 */
export function targetRequest(
  target: Target,
  url: string,
  path: string,
  method: string,
  json: unknown,
  headers: () => Record<string, string>,
): TargetedRequest {
  const to = target.origin === undefined ? url : target.origin + path;
  const model = target.model;
  const body = isObject(json) && model !== undefined && json.model !== model ? { ...json, model } : json;
  const rewrite = target.rewrite as HttpTargetSpec['rewrite'];
  if (rewrite === undefined)
    return { url: to, body: body === json ? undefined : JSON.stringify(body), headers: undefined };
  // A copy: the original stays as it was for the next target.
  const r = rewrite(
    { url: to, method, headers: headers(), json: body === undefined ? undefined : structuredClone(body) },
    target,
  );
  return { url: r.url, body: r.json === undefined ? undefined : JSON.stringify(r.json), headers: r.headers };
}
