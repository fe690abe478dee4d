import { Backoff } from '../engine/backoff.js';
import type { Classification } from '../engine/classify.js';
import type { Random } from '../engine/random.js';
import type { RetryPolicy } from './config.js';
import { type SdkPreset, sdkPreset, seenOf } from './sdk-presets.js';

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

/** A client library's retry loop, from its preset (`sdk-presets.ts`). */
class SdkPolicy implements PlainPolicy {
  constructor(
    private readonly preset: SdkPreset,
    private readonly random: Random,
  ) {}
  delayAfter(made: number, cls: Classification): number {
    return made > this.preset.maxRetries ? -1 : this.preset.delay(made, seenOf(cls), this.random);
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
      return new SdkPolicy(sdkPreset(p.sdk, p.maxRetries, p.runnerRetries), random);
    case 'engine':
      return undefined;
  }
}
