import { closest } from '../scenario/suggest.js';
import { DIFF_FAMILIES, type DiffMetric } from './diff-metrics.js';
import { GateError } from './gate-error.js';

/** How much worse than the base a figure may get, as a share of the base: 0.05 is 5 %. */
export interface DiffTolerance {
  /** For every metric without a tolerance of its own. @default 0.05 */
  default: number;
  /** By metric (`layers.llm.p99`) or family (`p99`, every p99); a metric's own beats its family's. */
  metrics: Record<string, number>;
}

export const DEFAULT_TOLERANCE = 0.05;

const SHARE = /^(\d+(?:\.\d*)?|\.\d+)\s*(%?)$/;

/**
 * The `--tolerance` flags, in order (a later one for the same metric wins): `5%` or `0.05` for
 * every metric, `amplification=2%` for one. Metric names are checked against the files later
 * ({@link checkToleranceNames}), when their layers are known.
 */
export function parseTolerances(flags: readonly string[]): DiffTolerance {
  const tolerance: DiffTolerance = { default: DEFAULT_TOLERANCE, metrics: {} };
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const value = parseShare(flag, eq < 0 ? flag : flag.slice(eq + 1));
    if (eq < 0) tolerance.default = value;
    else tolerance.metrics[canonicalName(flag, flag.slice(0, eq))] = value;
  }
  return tolerance;
}

function parseShare(flag: string, text: string): number {
  const m = SHARE.exec(text.trim());
  const got = `--tolerance ${JSON.stringify(flag)}`;
  if (m === null)
    throw new GateError(`${got}: expected a share like 5% or 0.05, or metric=share like amplification=2%`);
  const value = Number(m[1]) / (m[2] === '%' ? 100 : 1);
  // A bare 5 could mean 5 % or 500 %: make the user say.
  if (m[2] === '' && value > 1)
    throw new GateError(`${got}: a bare number is a share from 0 to 1; write ${m[1]}% for ${m[1]} percent`);
  return value;
}

/** The short name of a metric as the gate's long forms also spell it: `layers.llm.latencyMs.p99` → `layers.llm.p99`. */
function canonicalName(flag: string, raw: string): string {
  const name = raw.trim();
  if (name === '')
    throw new GateError(`--tolerance ${JSON.stringify(flag)}: expected metric=share, the metric is empty`);
  if (name === 'recoveryMs') return 'recovery';
  if (name === 'upstream.wastedTokens') return 'wastedTokens';
  return name.replace(/\.(latencyMs|latency)\.p99$/, '.p99');
}

/** Every name a tolerance may be given for, with these metrics: the families they have, then each metric. */
export function toleranceNames(metrics: readonly DiffMetric[]): string[] {
  const families = DIFF_FAMILIES.filter((f) => metrics.some((m) => m.family === f));
  return [...new Set<string>([...families, ...metrics.map((m) => m.name)])];
}

/** Throws on a tolerance for a metric that is not compared, with a did-you-mean and the list. */
export function checkToleranceNames(tolerance: DiffTolerance, metrics: readonly DiffMetric[]): void {
  const known = toleranceNames(metrics);
  for (const name of Object.keys(tolerance.metrics)) {
    if (known.includes(name)) continue;
    const hint = closest(name, known);
    throw new GateError(
      `--tolerance: unknown metric ${JSON.stringify(name)}${hint ? ` (did you mean ${hint}?)` : ''}; metrics: ${known.join(', ')}`,
    );
  }
}

/** The tolerance of one metric: its own, else its family's, else the default. */
export function toleranceFor(tolerance: DiffTolerance, metric: DiffMetric): number {
  return tolerance.metrics[metric.name] ?? tolerance.metrics[metric.family] ?? tolerance.default;
}

/** `5 %`, `2.5 %`, `0.1 %`: a tolerance for people. */
export function formatTolerance(share: number): string {
  return `${Number((share * 100).toFixed(2))} %`;
}

/** `5 % (amplification 2 %, p99 10 %)`: the tolerances in force, for the summary line. */
export function describeTolerance(tolerance: DiffTolerance): string {
  const own = Object.entries(tolerance.metrics).map(([name, t]) => `${name} ${formatTolerance(t)}`);
  return own.length === 0
    ? formatTolerance(tolerance.default)
    : `${formatTolerance(tolerance.default)} (${own.join(', ')})`;
}
