import { header, type HeaderSource } from './headers.js';

/** Decimal digits only: `Number()` would also take `0x10`, `1e3`, `Infinity` and `''`. */
const DECIMAL = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/;

/**
 * The three HTTP-date forms (RFC 9110 §5.6.7) all start with a day name and carry hh:mm:ss:
 * IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`,
 * asctime `Sun Nov  6 08:49:37 1994`. The shape check matters because V8's `Date.parse` is
 * lenient: it reads `hello 2020` as 1 Jan 2020.
 */
const HTTP_DATE = /^\s*(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s[\s\S]*\d{1,2}:\d{2}:\d{2}/i;
const HAS_ZONE = /(gmt|utc|z|[+-]\d{4})\s*$/i;

/**
 * Milliseconds the upstream asks us to wait, or undefined when it does not say (or says
 * something unusable).
 *
 * - `retry-after-ms` (OpenAI, Azure): float milliseconds. Wins over `retry-after` when valid;
 *   when it is garbage, `retry-after` is still consulted (as the OpenAI SDK does).
 * - `retry-after`: delay-seconds (integers, and decimals some proxies send) or an HTTP-date.
 *   A date is resolved against `nowEpochMs` (the caller's clock; this file never reads one):
 *   `max(0, date − now)`, so a date in the past means "now". With a non-finite `nowEpochMs`
 *   dates cannot be resolved and give undefined.
 *
 * Negative, NaN, empty and unparsable values give undefined.
 */
export function parseRetryAfter(headers: HeaderSource, nowEpochMs: number): number | undefined {
  if (headers == null) return undefined;
  const ms = decimal(header(headers, 'retry-after-ms'));
  if (ms !== undefined) return ms;
  const raw = header(headers, 'retry-after');
  if (raw === undefined) return undefined;
  const seconds = decimal(raw);
  if (seconds !== undefined) return seconds * 1000;
  return httpDateDelay(raw, nowEpochMs);
}

function decimal(raw: string | undefined): number | undefined {
  if (raw === undefined || !DECIMAL.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

function httpDateDelay(raw: string, nowEpochMs: number): number | undefined {
  if (!Number.isFinite(nowEpochMs) || !HTTP_DATE.test(raw)) return undefined;
  // HTTP-dates are always GMT; asctime carries no zone and Date.parse would read it as local.
  const at = Date.parse(HAS_ZONE.test(raw) ? raw : `${raw} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowEpochMs);
}
