import { formatDuration } from '../upstream/duration.js';

/** The named fault phases `calibrate --faults` adds, so a calibrated system can be stormed at once. */
export const FAULT_PRESETS = ['brownout', 'outage', 'rate-limit'] as const;
export type FaultPreset = (typeof FAULT_PRESETS)[number];

/**
 * The phases of a named fault over the middle third of a run of `durationMs`:
 * - brownout: 30 % of attempts fail (half 429, half 503) and answers take 3× as long;
 * - outage: every attempt gets a 503;
 * - rate-limit: 70 % of attempts get a 429.
 */
export function faultPreset(
  name: FaultPreset,
  durationMs: number,
): { phases: Record<string, unknown>[]; says: string } {
  const from = formatDuration(Math.round(durationMs / 3000) * 1000);
  const to = formatDuration(Math.max(Math.round((2 * durationMs) / 3000), Math.round(durationMs / 3000) + 1) * 1000);
  const when = `from ${from} to ${to}`;
  switch (name) {
    case 'brownout':
      return {
        phases: [
          { kind: 'errors', from, to, rate: 0.3, status: { 429: 0.5, 503: 0.5 } },
          { kind: 'latency', from, to, factor: 3 },
        ],
        says: `--faults brownout: ${when}, 30 % of attempts fail (429 / 503) and answers take 3× as long`,
      };
    case 'outage':
      return {
        phases: [{ kind: 'outage', from, to, status: 503 }],
        says: `--faults outage: ${when}, every attempt gets a 503`,
      };
    case 'rate-limit':
      return {
        phases: [{ kind: 'errors', from, to, rate: 0.7, status: 429 }],
        says: `--faults rate-limit: ${when}, 70 % of attempts get a 429`,
      };
  }
}
