import { Backoff } from '../engine/backoff.js';
import type { Classification } from '../engine/classify.js';
import type { Random } from '../engine/random.js';
import type { RetryPolicy } from './config.js';

/**
 * The retry policies that are not the engine. `delayAfter` answers how long to wait before
 * the next attempt, or −1 to stop, given the attempts made so far and the last outcome.
 */
export interface PlainPolicy {
  delayAfter(attemptsMade: number, cls: Classification): number;
}

/** Retries every failure, whatever it was, up to `attempts` in all: the retry storm's engine. */
class NaivePolicy implements PlainPolicy {
  constructor(
    private readonly attempts: number,
    private readonly backoff: Backoff,
  ) {}
  delayAfter(made: number): number {
    return made < this.attempts ? this.backoff.delayMs(made) : -1;
  }
}

/**
 * The official OpenAI SDK's retry loop (openai-node v4–v6): `maxRetries` (2), retrying 408,
 * 409, 429, 5xx, connection errors and timeouts unless `x-should-retry` says otherwise;
 * `retry-after-ms` / `retry-after` used when between 0 and 60 s, else
 * min(0.5 s × 2^retries, 8 s) × (1 − 0.25 × random).
 */
class SdkPolicy implements PlainPolicy {
  constructor(
    private readonly maxRetries: number,
    private readonly random: Random,
  ) {}
  delayAfter(made: number, cls: Classification): number {
    if (cls.action !== 'retry' || made > this.maxRetries) return -1;
    const hint = cls.retryAfterMs;
    if (hint !== undefined && hint > 0 && hint <= 60_000) return hint;
    const retries = made - 1;
    return Math.min(500 * 2 ** retries, 8000) * (1 - 0.25 * this.random.next());
  }
}

class NoRetry implements PlainPolicy {
  delayAfter(): number {
    return -1;
  }
}

/** The plain policy for a layer; undefined for `engine`, which the interpreter drives itself. */
export function plainPolicy(p: RetryPolicy, random: Random): PlainPolicy | undefined {
  switch (p.policy) {
    case 'none':
      return new NoRetry();
    case 'naive':
      return new NaivePolicy(
        p.attempts,
        new Backoff({ strategy: 'exponential', baseMs: 100, capMs: 10_000, ...p.backoff }, random),
      );
    case 'sdk':
      return new SdkPolicy(p.maxRetries, random);
    case 'engine':
      return undefined;
  }
}
