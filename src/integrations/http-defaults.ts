import type { CommitPolicy } from './stream-gate.js';

/**
 * The HTTP integrations' timeouts for LLM calls (README, "Timeouts"), in one place. A silent
 * provider has to end well inside a 100 s call budget with time left for the fallback:
 * - a streamed request's headers come before any generation, so 10 s of silence means the
 *   provider is not answering (fallback answers at ~11 s);
 * - a non-streamed answer's headers come only once the whole completion is written: 30 s is
 *   ~1500 output tokens at 50 tokens/s (raise it for longer answers, or stream them);
 * - the first content token within 20 s of the attempt's start (queueing and prompt
 *   processing of a long prompt; reasoning models that think before they speak need more);
 * - 15 s without any event (providers send keep-alive pings during long pauses) is a stall.
 */
export const HTTP_DEFAULTS = {
  headersTimeoutMs: 30_000,
  streamHeadersTimeoutMs: 10_000,
  firstTokenMs: 20_000,
  idleMs: 15_000,
  commit: 'first-token' as CommitPolicy,
  /**
   * Protect at outage without costing goodput at partial failure (README, "Breaker defaults").
   * With retries, a provider failing half its requests fails about half the attempts: at the
   * engine's breaker ratio 0.5 the breaker opened and shed calls that would have succeeded, and
   * at K = 2 the throttle sits on its edge there. The breaker at 0.8 and the throttle at K = 3
   * stay out of the way of a brownout and still close the door at outage (the breaker opens
   * when nearly everything fails); a retry budget of 0.5 lets a brownout's failures be retried
   * once while bounding an outage's retries, before the breaker opens, to 1.5 per call.
   */
  breaker: { failureRatio: 0.8, throttledRatio: 0.8 },
  throttle: { k: 3 },
  retryBudget: { ratio: 0.5 },
} as const;
