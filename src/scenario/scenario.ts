import type { LiveApi } from '../run/live/wire-format.js';
import type { TrafficConfig } from '../traffic/config.js';
import type { UpstreamConfig } from '../upstream/config.js';

/** One `path = value` change to a scenario document, from `--set` or a variant. */
export interface Override {
  /** `arrival.rate`, `upstream.faults[0].rate`, `layers[*].retry.policy`. */
  path: string;
  value: unknown;
}

/** A policy variant for `compare`: overrides applied on top of the scenario, under the command line's. */
export interface Variant {
  name: string;
  set: Override[];
}

/** Where live runs keep idempotency keys (`idempotency:` in a scenario). */
export const IDEMPOTENCY_STORES = ['service', 'redis'] as const;
export type IdempotencyStoreKind = (typeof IDEMPOTENCY_STORES)[number];

/** How `--mode live` talks to the upstream over HTTP. */
export interface LiveConfig {
  /** Connections of the undici pool; requests past them wait for one (pool starvation, measured). @default 256 */
  connections: number;
  /** The API requests are written in: OpenAI chat completions or Anthropic messages. @default 'openai' */
  api: LiveApi;
  /** Streamed requests (SSE) instead of JSON answers. @default false */
  stream: boolean;
}

/** A scenario after loading, overrides, validation and defaults: what the runners take. */
export interface Scenario {
  name: string;
  description: string;
  seed: number;
  durationMs: number;
  /** After durationMs no new roots arrive; the run waits at most this long for work in flight. @default 120_000 */
  drainMs: number;
  traffic: TrafficConfig;
  upstream: UpstreamConfig;
  /** Named policy variants for `compare`; each is a list of overrides applied on top of the file, under the command line's. @default naive and engine */
  variants: Variant[];
  /** Expectations (strings like 'amplification < 1.5'), kept raw for a later issue. */
  expect: string[];
  /** Settings of live runs (ignored in simulation). */
  live: LiveConfig;
  /**
   * Where live runs keep the idempotency keys of keyed tool calls: at the tool service (it
   * answers a key in progress with 409 and one done with its receipt), or in Redis
   * (`RedisIdempotencyStore` at `REDIS_URL`), taken by the engine before each request, so the
   * keys hold across every process sharing it. The simulator always keeps them at its service.
   * @default 'service'
   */
  idempotency?: IdempotencyStoreKind;
  /** Where it came from, for messages: a file path, `<inline>`, with ` (variant x)` for a variant. */
  source: string;
  /**
   * The document that runs, before defaults: the file's, then the variant's overrides, then
   * the command line's (see `resolveDocument`). Its paths are the user-facing keys
   * (`arrival.rate`, `layers[0].timeout`), not the resolved ones; saved as a file and run as
   * written, it runs the same scenario again.
   */
  document: unknown;
}
