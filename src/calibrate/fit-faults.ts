import { formatDuration } from '../upstream/duration.js';
import { round } from './fit-dist.js';

/** A fault phase is where the failure share of a second is at least this share of the worst second's. */
const PHASE_SHARE = 0.5;
/** Outside a phase, failures below this share are no baseline phase of their own. */
const BASELINE = 0.005;

export interface FaultFit {
  phases: Record<string, unknown>[];
  fits: string[];
  notes: string[];
}

/** Where the upstream's failures are read from: the traces' attempts, or a `serve --log`. */
export interface FailureSource {
  /** Attempts by outcome (`200`, `429`, `error` for none recorded), one map per model. */
  statuses: Iterable<ReadonlyMap<string, number>>;
  /** Attempts and failed ones per second (epoch seconds). */
  bins: ReadonlyMap<number, readonly [number, number]>;
  /** What a failure without a status is, for the note (`a reset or a timeout, error.type only`). */
  noStatus: string;
}

/**
 * The upstream's failures over time as `errors` phases: one over the seconds where failures
 * were concentrated (from the first to the last second at half the worst second's share or
 * more), and a baseline before and after it when failures went on outside; or one over the
 * whole run when they were spread evenly. The status mix is that of all failed attempts (their
 * HTTP status; a failure with none recorded — a reset, a timeout — is given 503, said so).
 */
export function faultPhases(src: FailureSource, t0: number, durationMs: number): FaultFit {
  const mix = new Map<string, number>();
  let noStatus = 0;
  let failed = 0;
  for (const m of src.statuses)
    for (const [s, c] of m) {
      if (s === '200' || Number(s) < 400) continue;
      failed += c;
      const k = s === 'error' ? '503' : s;
      if (s === 'error') noStatus += c;
      mix.set(k, (mix.get(k) ?? 0) + c);
    }
  const out: FaultFit = { phases: [], fits: [], notes: [] };
  if (failed === 0) {
    out.fits.push('upstream: no failed attempt seen, no fault phase');
    return out;
  }
  const status: Record<string, number> = {};
  for (const [k, c] of [...mix].sort((a, b) => b[1] - a[1])) status[k] = round(c / failed);
  if (noStatus > 0)
    out.notes.push(`${noStatus} failed attempts had no HTTP status (${src.noStatus}): simulated as 503`);
  const base = Math.floor(t0 / 1000);
  const bins = [...src.bins].map(([k, v]) => [k - base, v[0], v[1]] as const).sort((a, b) => a[0] - b[0]);
  let worst = 0;
  let attempts = 0;
  let fails = 0;
  for (const [, n, f] of bins) {
    attempts += n;
    fails += f;
    if (n >= 2 && f / n > worst) worst = f / n;
  }
  // A loop, not Math.max(...): a day of traces is 86,400 bins, past what a spread takes.
  if (worst === 0) for (const [, n, f] of bins) if (f / n > worst) worst = f / n;
  const hot = bins.filter(([, n, f]) => f / n >= PHASE_SHARE * worst && f > 0);
  const from = hot[0][0];
  const to = hot[hot.length - 1][0] + 1;
  let inN = 0;
  let inF = 0;
  for (const [k, n, f] of bins)
    if (k >= from && k < to) {
      inN += n;
      inF += f;
    }
  const inside = inF / inN;
  const outN = attempts - inN;
  const outside = outN > 0 ? (fails - inF) / outN : 0;
  const phase = (fromS: number, toS: number | undefined, rate: number) => ({
    kind: 'errors',
    ...(fromS > 0 ? { from: formatDuration(fromS * 1000) } : {}),
    ...(toS !== undefined && toS * 1000 < durationMs ? { to: formatDuration(toS * 1000) } : {}),
    rate: round(Math.min(1, rate)),
    status,
  });
  if (outN === 0 || outside > 0.2 * inside || (from <= 0 && to * 1000 >= durationMs)) {
    out.phases.push(phase(0, undefined, fails / attempts));
    out.fits.push(
      `upstream: ${fails} of ${attempts} attempts failed, spread over the run: one errors phase at ${round(fails / attempts)}`,
    );
    return out;
  }
  if (outside > BASELINE && from > 0) out.phases.push(phase(0, from, outside));
  out.phases.push(phase(from, to, inside));
  if (outside > BASELINE && to * 1000 < durationMs) out.phases.push(phase(to, undefined, outside));
  out.fits.push(
    `upstream: failures concentrated from ${from} s to ${to} s (${inF} of ${inN} attempts, ${round(inside)}); ${round(outside)} outside`,
  );
  return out;
}
