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
   * The breaker trips at outage, not at a brownout: with retries, a provider failing half its
   * requests fails about half the attempts, and at the engine's 0.5 the breaker opened and shed
   * calls that would have succeeded. At 0.8 it stays closed through partial failure (the
   * throttle and the retry budget pace that) and opens when nearly everything fails.
   */
  breaker: { failureRatio: 0.8, throttledRatio: 0.8 },
} as const;
