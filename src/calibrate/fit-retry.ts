import { SDK_NAMES, SDK_PRESETS, type SdkName, sdkPreset, type Seen } from '../traffic/sdk-presets.js';
import type { RetryStats } from './observations.js';

/** A retry policy as a scenario writes it. */
export type PolicyDoc =
  | { policy: 'none' }
  | {
      policy: 'naive';
      attempts: number;
      backoff: { strategy: 'exponential'; baseMs: number; multiplier: number; capMs: number };
    }
  | { policy: 'sdk'; sdk: SdkName; maxRetries?: number };

export interface PolicyFit {
  policy: PolicyDoc;
  /** What was seen and why this policy, one line. */
  why: string;
  /** Said as an approximation when the fit is loose or a guess. */
  approximate: boolean;
}

/** A preset fits when its waits are within this factor of the observed ones (geometric mean). */
const FIT_FACTOR = 1.6;
/** Waits are compared after adding this much, so a few ms of overhead do not dominate short waits. */
const SLACK_MS = 50;

const MIDDLE = { next: () => 0.5 };

/** What a preset waits before retry `retry` after a retryable failure without a hint (its jitter at the middle). */
function presetWait(sdk: SdkName, retry: number): number {
  const seen: Seen = { status: 503, network: false, timeout: false, quota: false, vetoed: false, hintMs: undefined };
  return sdkPreset(sdk, Math.max(retry, 10), 0).delay(retry, seen, MIDDLE);
}

function median(r: { quantile(q: number): number }): number {
  return r.quantile(0.5);
}

/**
 * The retry policy of one place of the tree from what its calls did: no retry when failures
 * were never retried; the client library whose preset waits closest to the observed waits
 * (`sdk`) when one is within `FIT_FACTOR`; else a naive loop with the observed attempts and
 * backoff. With no failure seen nothing can be observed: `assumed` (the library the spans'
 * instrumentation names) is taken, said so.
 */
export function fitPolicy(r: RetryStats, assumed: SdkName | undefined, where: string): PolicyFit {
  if (r.failures === 0) {
    if (assumed !== undefined)
      return {
        policy: { policy: 'sdk', sdk: assumed },
        why: `${where}: no failure seen, so no retry could be observed; the ${assumed} client's own retries are assumed (its instrumentation wrote the spans)`,
        approximate: true,
      };
    return {
      policy: { policy: 'none' },
      why: `${where}: no failure seen, so no retry could be observed; none assumed`,
      approximate: true,
    };
  }
  if (r.retries === 0)
    return {
      policy: { policy: 'none' },
      why: `${where}: ${r.failures} failed attempts, none retried`,
      approximate: false,
    };
  const maxAttempts = Math.max(...r.byAttempts.keys());
  const maxRetries = maxAttempts - 1;
  const waits = r.gaps.map(median);
  const shape =
    r.siblingRetries > 0 && r.httpRetries > 0
      ? `${r.httpRetries} as HTTP attempts, ${r.siblingRetries} as sibling spans`
      : r.httpRetries > 0
        ? `${r.httpRetries} as HTTP attempts under the call's span`
        : `${r.siblingRetries} as sibling spans (${confidence(r)})`;
  const said = `${where}: ${r.retries} retries (${shape}), at most ${maxAttempts} attempts, median waits ${waits.map((w) => `${Math.round(w)} ms`).join(', ')}${honours(r)}`;
  let best: SdkName | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const order = assumed === undefined ? SDK_NAMES : [assumed, ...SDK_NAMES.filter((n) => n !== assumed)];
  for (const sdk of order) {
    let s = 0;
    for (let i = 0; i < waits.length; i++)
      s += Math.abs(Math.log((waits[i] + SLACK_MS) / (presetWait(sdk, i + 1) + SLACK_MS)));
    s /= waits.length;
    if (s < bestScore - 1e-9) {
      bestScore = s;
      best = sdk;
    }
  }
  if (best !== undefined && bestScore <= Math.log(FIT_FACTOR)) {
    const fixed = retriesKnown(r, maxAttempts);
    const policy: PolicyDoc = { policy: 'sdk', sdk: best };
    const max = fixed ? maxRetries : Math.max(maxRetries, SDK_PRESETS[best].maxRetries);
    if (max !== SDK_PRESETS[best].maxRetries) policy.maxRetries = max;
    return {
      policy,
      why: `${said} → sdk ${best} (its waits within ×${Math.exp(bestScore).toFixed(2)})${fixed ? '' : '; no call ran out of attempts, so its retry limit is the larger of what was seen and the library default'}`,
      approximate: !fixed,
    };
  }
  const base = Math.max(1, Math.round(waits[0]));
  const mult = waits.length > 1 && waits[0] > 0 ? clamp(waits[1] / waits[0], 1, 4) : 2;
  const cap = Math.max(base, Math.round(Math.max(...waits) * 1.5));
  return {
    policy: {
      policy: 'naive',
      attempts: maxAttempts,
      backoff: { strategy: 'exponential', baseMs: base, multiplier: Math.round(mult * 100) / 100, capMs: cap },
    },
    why: `${said} → naive (no client library's waits fit within ×${FIT_FACTOR}; nearest ${best} at ×${Math.exp(bestScore).toFixed(2)})`,
    approximate: true,
  };
}

/** Whether the retry limit was reached: some call failed after the most attempts seen. */
function retriesKnown(r: RetryStats, maxAttempts: number): boolean {
  return (r.failedByAttempts.get(maxAttempts) ?? 0) > 0;
}

function confidence(r: RetryStats): string {
  const n = Math.max(1, r.siblingRetries);
  const level = r.sure / n >= 0.9 ? 'high' : (r.sure + r.unsure) / n >= 0.9 ? 'medium' : 'low';
  const unsure = r.unsure > 0 ? `, ${r.unsure} a failure with no status recorded` : '';
  return `confidence ${level}: ${r.sure} of ${r.siblingRetries} followed a failure with a retryable status${unsure}${r.repeats > 0 ? `; ${r.repeats} repeats after a success were taken as calls of their own` : ''}`;
}

function honours(r: RetryStats): string {
  if (r.hinted === 0) return '; no retry-after recorded';
  return `; ${r.honoured} of ${r.hinted} waits after a retry-after hint honoured it`;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
