import type { Dist } from '../upstream/distribution.js';
import { round } from './fit-dist.js';
import { quantileOf } from './reservoir.js';

/** Closed loop: most starts follow an earlier task's end this closely (and the number in flight stays put). */
const CLOSED_MATCHED = 0.9;
const CLOSED_IN_FLIGHT_CV = 0.1;
/** Open loop: inter-arrival gaps this regular (coefficient of variation) are a constant rate, else Poisson. */
const CONSTANT_CV = 0.25;

export type ArrivalDoc =
  | { type: 'constant' | 'poisson'; rate: number }
  | { type: 'closed'; users: number; think: Dist };

export interface ArrivalFit {
  arrival: ArrivalDoc;
  /** From the first root's start, ms. */
  durationMs: number;
  why: string;
  /** Said when the rate changed over the traces (a ramp or bursts not fitted). */
  drift: string | undefined;
}

/** How root tasks arrived: closed-loop users when roots start as others end, else a constant or Poisson rate. */
export function fitArrivals(startsIn: Float64Array, endsIn: Float64Array, n: number): ArrivalFit {
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => startsIn[a] - startsIn[b]);
  const starts = Float64Array.from(order, (i) => startsIn[i]);
  const ends = Float64Array.from(order, (i) => endsIn[i]);
  const t0 = starts[0];
  const span = starts[n - 1] - t0;
  const durations = Float64Array.from(order.map((_, i) => ends[i] - starts[i])).sort();
  const medianDuration = quantileOf(durations, 0.5);
  const closed = n >= 10 ? closedLoop(starts, ends, medianDuration) : undefined;
  if (closed !== undefined) {
    const cycle = medianDuration + (typeof closed.think === 'number' ? closed.think : closed.thinkMedian);
    return {
      arrival: { type: 'closed', users: closed.users, think: closed.think },
      durationMs: Math.ceil((span + cycle) / 1000) * 1000,
      why: `closed loop: ${closed.users} users (${Math.round(closed.matched * 100)} % of roots started as another ended, median think ${Math.round(closed.thinkMedian)} ms)`,
      drift: undefined,
    };
  }
  if (n < 2 || span <= 0)
    return {
      arrival: { type: 'constant', rate: 1 },
      durationMs: Math.max(1000, Math.ceil(medianDuration / 1000) * 1000),
      why: `${n} root task${n === 1 ? '' : 's'}: no rate can be measured; 1 per second`,
      drift: undefined,
    };
  const rate = (n - 1) / (span / 1000);
  const gaps = new Float64Array(n - 1);
  for (let i = 1; i < n; i++) gaps[i - 1] = starts[i] - starts[i - 1];
  const mean = span / (n - 1);
  let v = 0;
  for (const g of gaps) v += (g - mean) ** 2;
  const cv = Math.sqrt(v / gaps.length) / mean;
  const type = cv < CONSTANT_CV ? 'constant' : 'poisson';
  const half = t0 + span / 2;
  let firstHalf = 0;
  for (const s of starts) if (s < half) firstHalf++;
  const ratio = firstHalf / Math.max(1, n - firstHalf);
  const drift =
    n >= 40 && (ratio > 2 || ratio < 0.5)
      ? `arrivals: ${firstHalf} roots in the first half of the time range, ${n - firstHalf} in the second; a constant rate was fitted (no ramp or bursts)`
      : undefined;
  return {
    arrival: { type, rate: round(rate) },
    durationMs: Math.max(1000, Math.ceil((span + mean) / 1000) * 1000),
    why: `open loop: ${n} roots over ${(span / 1000).toFixed(1)} s, ${round(rate)}/s, inter-arrival CV ${cv.toFixed(2)} → ${type}`,
    drift,
  };
}

/** Users and think time when the roots look like a closed loop; undefined when they do not. */
function closedLoop(
  starts: Float64Array,
  ends: Float64Array,
  medianDuration: number,
): { users: number; think: Dist; thinkMedian: number; matched: number } | undefined {
  const n = starts.length;
  const endOrder = Float64Array.from(ends).sort();
  // Each start takes the latest end before it that no other start took (a user back from thinking).
  const free: number[] = [];
  let e = 0;
  let firsts = 0;
  const think: number[] = [];
  const inFlight: number[] = [];
  let ended = 0;
  for (let i = 0; i < n; i++) {
    const s = starts[i];
    while (e < n && endOrder[e] <= s) {
      free.push(endOrder[e]);
      e++;
      ended++;
    }
    const prev = free.pop();
    if (prev === undefined) firsts++;
    else think.push(s - prev);
    inFlight.push(i + 1 - ended);
  }
  const matched = think.length / Math.max(1, n - firsts);
  if (matched < CLOSED_MATCHED || firsts > n / 5) return undefined;
  const sortedThink = Float64Array.from(think).sort();
  const t90 = quantileOf(sortedThink, 0.9);
  if (t90 > Math.max(100, 0.25 * medianDuration)) return undefined;
  const steady = inFlight.slice(firsts);
  if (steady.length < 5) return undefined;
  const mean = steady.reduce((a, b) => a + b, 0) / steady.length;
  const sd = Math.sqrt(steady.reduce((a, b) => a + (b - mean) ** 2, 0) / steady.length);
  if (sd / mean > CLOSED_IN_FLIGHT_CV) return undefined;
  const t50 = quantileOf(sortedThink, 0.5);
  const t99 = quantileOf(sortedThink, 0.99);
  const thinkDist: Dist =
    t99 - t50 < 5
      ? Math.round(t50)
      : { dist: 'lognormal', median: Math.max(1, Math.round(t50)), p99: Math.max(2, Math.round(t99)) };
  return { users: firsts, think: thinkDist, thinkMedian: t50, matched };
}
