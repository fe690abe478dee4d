import { type Classification, classifyStatus } from '../engine/classify.js';
import type { Random } from '../engine/random.js';

/**
 * The retry loops of the client libraries people put between an agent and its model, read
 * from their sources (the versions in the comments) and checked against the real packages by
 * test/traffic/sdk-presets-real.slow.test.ts. Each answers: after `retry − 1` retries, wait how
 * long before retry number `retry` — or −1 to give up.
 */
export const SDK_NAMES = ['openai', 'openai-v4', 'anthropic', 'vercel-ai', 'langchain', 'openai-agents'] as const;
export type SdkName = (typeof SDK_NAMES)[number];

/** What a client library can tell of a failed attempt, read back from its classification. */
export interface Seen {
  /** The HTTP status, if there was an answer. */
  status: number | undefined;
  /** Connection refused/reset, a socket broken mid-body. */
  network: boolean;
  /** The attempt ran out of time (the client's own timeout, or one below it). */
  timeout: boolean;
  /** A 429 that says the quota is spent (`insufficient_quota`), not a rate limit. */
  quota: boolean;
  /** The answer said `x-should-retry: false`. */
  vetoed: boolean;
  /** `retry-after-ms` / `retry-after`, in ms. */
  hintMs: number | undefined;
}

export function seenOf(cls: Classification): Seen {
  const status = cls.status;
  const byStatus = status === undefined ? undefined : classifyStatus(status);
  return {
    status,
    network: cls.class === 'connection',
    timeout: cls.class === 'timeout',
    quota: cls.class === 'quota_exhausted',
    // Only `x-should-retry: false` turns a status that is retried by its class into a failure.
    vetoed:
      byStatus !== undefined && byStatus.class === cls.class && byStatus.action === 'retry' && cls.action === 'fail',
    hintMs: cls.retryAfterMs,
  };
}

export interface SdkPreset {
  /** Retries after the first attempt, as the library ships. */
  readonly maxRetries: number;
  /** Which versions this describes, and what changed between them. */
  readonly versions: string;
  /** ms before retry number `retry` (1-based), or −1 to give up; `retry` ≤ maxRetries here. */
  delay(retry: number, seen: Seen, random: Random): number;
}

/** Statuses the Stainless-generated SDKs (openai, anthropic) and Vercel's providers retry. */
const retriedStatus = (s: number | undefined) => s === 408 || s === 409 || s === 429 || (s !== undefined && s >= 500);

/** openai-node and @anthropic-ai/sdk: 0.5 s × 2^n, at most 8 s, minus up to 25 % jitter. */
const stainlessBackoff = (retry: number, random: Random) =>
  Math.min(500 * 2 ** (retry - 1), 8000) * (1 - 0.25 * random.next());

/** Both Stainless SDKs retry the same failures, and obey `x-should-retry`. */
const stainlessRetries = (seen: Seen) => !seen.vetoed && (retriedStatus(seen.status) || seen.network || seen.timeout);

const OPENAI: SdkPreset = {
  maxRetries: 2,
  versions:
    'openai-node 6.26–6.49: any `retry-after-ms`/`retry-after` is waited out as given, however long (before 6.26: only under 60 s — see openai-v4)',
  delay: (retry, seen, random) =>
    !stainlessRetries(seen) ? -1 : seen.hintMs !== undefined ? seen.hintMs : stainlessBackoff(retry, random),
};

const OPENAI_V4: SdkPreset = {
  maxRetries: 2,
  versions: 'openai-node 4.x–6.25: a hint is waited out only when above 0 and under 60 s; else its own backoff',
  delay: (retry, seen, random) => {
    if (!stainlessRetries(seen)) return -1;
    const h = seen.hintMs;
    return h !== undefined && h > 0 && h < 60_000 ? h : stainlessBackoff(retry, random);
  },
};

const ANTHROPIC: SdkPreset = {
  maxRetries: 2,
  versions: '@anthropic-ai/sdk 0.x–1.15: a hint is waited out when above 0 (and one timer can hold it); 529 is a 5xx',
  delay: (retry, seen, random) => {
    if (!stainlessRetries(seen)) return -1;
    const h = seen.hintMs;
    return h !== undefined && h > 0 && h <= 2 ** 31 - 1 ? h : stainlessBackoff(retry, random);
  },
};

const VERCEL_AI: SdkPreset = {
  maxRetries: 2,
  versions:
    'ai 5–6 (generateText/streamText, maxRetries 2): 2 s then 4 s, no jitter; a hint under 60 s (or under the backoff) replaces the backoff; `x-should-retry` is not read; a timeout is an abort and ends the call',
  delay: (retry, seen) => {
    if (!(retriedStatus(seen.status) || seen.network)) return -1;
    const backoff = 2000 * 2 ** (retry - 1);
    const h = seen.hintMs;
    return h !== undefined && h >= 0 && (h < 60_000 || h < backoff) ? h : backoff;
  },
};

/** LangChain's AsyncCaller gives up at once on these (it turns the OpenAI client's own retries off). */
const LANGCHAIN_NO_RETRY = new Set([400, 401, 402, 403, 404, 405, 406, 407, 409, 413]);

const LANGCHAIN: SdkPreset = {
  maxRetries: 6,
  versions:
    '@langchain/core 1.x AsyncCaller (ChatOpenAI, ChatAnthropic): 6 retries, round((1 + U) × 1 s × 2^n); a 429 is retried only with a hint of at most 60 s (waited out if longer than the backoff) — a 429 without `retry-after` ends the call; `x-should-retry` is not read',
  delay: (retry, seen, random) => {
    const s = seen.status;
    if (s !== undefined && LANGCHAIN_NO_RETRY.has(s)) return -1;
    const backoff = Math.round((1 + random.next()) * 1000 * 2 ** (retry - 1));
    if (s !== 429) return backoff;
    if (seen.quota || seen.hintMs === undefined || seen.hintMs > 60_000) return -1;
    return Math.max(backoff, seen.hintMs);
  },
};

/**
 * The OpenAI Agents SDK's runner (0.13): by default it leaves retries to the OpenAI client it
 * wraps (the `openai` preset). With `modelSettings.retry` (`runnerRetries` here, policy
 * `retryPolicies.providerSuggested()`), it retries a call the client gave up on up to that many
 * more times, one attempt each — the client's own retries are turned off after the runner's
 * first attempt — waiting the hint, else 250 ms × 2^k (at most 2 s) × 0.875–1.125.
 */
function openaiAgents(client: number, runnerRetries: number): SdkPreset {
  return {
    maxRetries: client + runnerRetries,
    versions:
      '@openai/agents 0.13: the OpenAI client retries (2); `modelSettings.retry` adds runner retries of one attempt each',
    delay: (retry, seen, random) => {
      if (retry <= client) return OPENAI.delay(retry, seen, random);
      if (!stainlessRetries(seen)) return -1;
      if (seen.hintMs !== undefined) return seen.hintMs;
      const k = retry - client;
      return Math.round(Math.min(250 * 2 ** (k - 1), 2000) * (0.875 + random.next() * 0.25));
    },
  };
}

export const SDK_PRESETS: Readonly<Record<SdkName, SdkPreset>> = {
  openai: OPENAI,
  'openai-v4': OPENAI_V4,
  anthropic: ANTHROPIC,
  'vercel-ai': VERCEL_AI,
  langchain: LANGCHAIN,
  'openai-agents': openaiAgents(OPENAI.maxRetries, 0),
};

/**
 * The preset a layer runs: `maxRetries` replaces the library's (for openai-agents it is the
 * wrapped OpenAI client's), `runnerRetries` are the Agents SDK runner's own.
 */
export function sdkPreset(name: SdkName, maxRetries: number, runnerRetries: number): SdkPreset {
  return name === 'openai-agents' ? openaiAgents(maxRetries, runnerRetries) : { ...SDK_PRESETS[name], maxRetries };
}
