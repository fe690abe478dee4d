import type { ResultNote, RunResult, UpstreamHop } from '../run/metrics/result.js';
import { formatDuration } from '../upstream/duration.js';
import { OUTPUT_TOKENS_HEADER } from '../upstream/output-tokens-header.js';
import { formatCount, formatMs } from './format.js';

/**
 * Hop 2 of a variant run with a gateway under test, if it was. A result file written before
 * hop 2 was read settled (no `settle`, no total: `report/result-schema.ts` lets it through)
 * has none to show.
 */
export function hopOf(v: RunResult): UpstreamHop | undefined {
  const h = v.live?.upstream;
  return h?.settle === undefined || h.totalAmplification === undefined ? undefined : h;
}

/** How hop 2 was read, in a few words: `after 5.20 s` (the driver's end) when it settled, else why it did not. */
export function settleText(h: UpstreamHop): string {
  const s = h.settle;
  if (s.outcome === 'quiet') return `after ${formatMs(s.waitedMs)}`;
  if (s.outcome === 'timeout') return `no (${formatDuration(s.timeoutMs)} out)`;
  return s.outcome === 'skipped' ? 'no (stopped)' : 'no (unreadable)';
}

/**
 * What a reader must not miss about a variant's hops, one note each (none without a gateway
 * under test): hop 2 read before it settled, attempts that never reached the gateway, a
 * gateway that does not pass the harness's length header on, successes the upstream gave the
 * gateway that never reached the driver.
 */
export function hopNotes(vs: readonly RunResult[]): ResultNote[] {
  const notes: ResultNote[] = [];
  for (const v of vs) {
    const h = hopOf(v);
    if (h === undefined) continue;
    const variant = v.name;
    const s = h.settle;
    if (!s.settled) {
      const why =
        s.outcome === 'timeout'
          ? `--settle-timeout ${formatDuration(s.timeoutMs)} ran out with ${formatCount(s.inFlight)} in flight there`
          : s.outcome === 'skipped'
            ? 'the run was stopped'
            : 'its counters could not be read again';
      notes.push({
        kind: 'hop-unsettled',
        variant,
        outcome: s.outcome,
        inFlight: s.inFlight,
        message: `${variant}: hop 2 was read before the upstream settled (${why}): its figures may be short`,
      });
    }
    const unsent = v.upstream.attempts - h.sent;
    if (unsent > 0)
      notes.push({
        kind: 'hop-unsent',
        variant,
        attempts: v.upstream.attempts,
        sent: h.sent,
        message: `${variant}: ${formatCount(unsent)} of the driver's ${formatCount(v.upstream.attempts)} attempts were given up on before they reached the gateway (waiting for a connection: raise --connections); hop 2 is per request the gateway got, so hop 1 × hop 2 exceeds the total`,
      });
    if (h.noLengthHeader > 0) {
      const answered = h.lengthsAsAsked
        ? 'the upstream answered them as the header asks (told so through its control API)'
        : "their lengths are the upstream's own, so token figures are as measured, not the scenario's";
      notes.push({
        kind: 'length-header',
        variant,
        requests: h.noLengthHeader,
        of: h.reached,
        lengthsAsAsked: h.lengthsAsAsked,
        message: `${variant}: ${formatCount(h.noLengthHeader)} of ${formatCount(h.reached)} requests reached the upstream without ${OUTPUT_TOKENS_HEADER} (the gateway does not pass it on): ${answered}`,
      });
    }
    const upstream = h.status['200'] ?? 0;
    const driver = v.upstream.status['200'] ?? 0;
    if (upstream > driver)
      notes.push({
        kind: 'successes-lost',
        variant,
        upstream,
        driver,
        message: `${variant}: the upstream answered the gateway ${formatCount(upstream)} 200s, the gateway the driver ${formatCount(driver)}: ${formatCount(upstream - driver)} successes never reached the driver (turned into errors, answered after it gave up, or hedged)`,
      });
  }
  return notes;
}
