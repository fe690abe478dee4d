/**
 * Number formats for people: `1,234`, `12.3k`, `27.0×`, `95.1 %`, `1.23 s`. Plain string
 * maths (no `toLocaleString`), so output does not depend on the machine's locale or ICU.
 */

const UNITS = ['', 'k', 'M', 'G', 'T'];

/** `1234567` → `1,234,567` (rounded to an integer). */
export function withCommas(n: number): string {
  const s = Math.round(Math.abs(n)).toString();
  const grouped = s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 && grouped !== '0' ? `-${grouped}` : grouped;
}

/**
 * Three significant digits below 1000 (`1.08`, `27.0`, `123`), then k/M/G/T (`12.3k`).
 * Rounding that carries into the next decade moves on to it (`9.996` → `10.0`, `999.7` → `1.00k`).
 */
export function sig3(x: number): string {
  if (!Number.isFinite(x)) return '—';
  if (x < 0) return `-${sig3(-x)}`;
  let unit = 0;
  let v = x;
  while (unit < UNITS.length - 1 && Number(fixed3(v)) >= 1000) {
    v /= 1000;
    unit++;
  }
  return `${fixed3(v)}${UNITS[unit]}`;
}

/** `v` with as many decimals as leave three significant digits, judged after rounding. */
function fixed3(v: number): string {
  for (const decimals of [2, 1]) {
    const text = v.toFixed(decimals);
    if (Number(text) < 10 ** (3 - decimals)) return text;
  }
  return v.toFixed(0);
}

/** A count: `1,234` below 10,000, then `12.3k`, `1.23M`. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return Math.abs(n) < 10_000 ? withCommas(n) : sig3(Math.round(n));
}

/** A multiplier: `27.0×`, `1.08×`. */
export function formatTimes(x: number): string {
  // Below 0.01× keep two significant digits: an engine that sends 0.3 % of the load did not send none.
  if (x > 0 && x < 0.01) return `${Number(x.toPrecision(2))}×`;
  return `${sig3(x)}×`;
}

/** A rate per second: `0.00/s`, `12.3/s`, `1.23k/s`. */
export function formatRate(x: number): string {
  return `${sig3(x)}/s`;
}

/**
 * A share as a percentage with one decimal: `95.1 %`. A share that is not 0 or 1 never shows
 * as `0.0 %` or `100.0 %` (`<0.1 %`, `>99.9 %`): 0.04 % of 429s is not none.
 */
export function formatPercent(share: number): string {
  if (!Number.isFinite(share)) return '—';
  const text = (share * 100).toFixed(1);
  if (share > 0 && text === '0.0') return '<0.1 %';
  if (share < 1 && text === '100.0') return '>99.9 %';
  return `${text} %`;
}

/** A duration: `850 ms`, `1.23 s`, `12.3 s`, `2.50 min`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${sig3(ms / 1000)} s`;
  return `${sig3(ms / 60_000)} min`;
}

/**
 * What a figure measures, and so how it reads: a multiplier, a rate per second, a share, a
 * duration in ms, a count, a token count (the units of the gate's metrics).
 */
export type FigureUnit = 'times' | 'rate' | 'share' | 'ms' | 'count' | 'tokens';

const BY_UNIT: Record<FigureUnit, (x: number) => string> = {
  times: formatTimes,
  rate: formatRate,
  share: formatPercent,
  ms: formatMs,
  count: formatCount,
  tokens: formatCount,
};

/**
 * A figure in its unit: `1.07×`, `15.3/s`, `95.1 %`, `1.23 s`, `12.3k`. A duration that never
 * came (infinite: a run that never recovered) is `never`; no figure at all is `—`.
 */
export function formatFigure(unit: FigureUnit, x: number | null): string {
  if (x === null) return '—';
  if (unit === 'ms' && x === Infinity) return 'never';
  return BY_UNIT[unit](x);
}
