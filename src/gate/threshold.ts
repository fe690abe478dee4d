import { parseDuration } from '../scenario/duration.js';
import { GateError } from './gate-error.js';
import type { Metric, MetricUnit } from './metric.js';

const NUMBER = /^(-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*(.*)$/i;

/** What each unit reads, and how to write a value of it, for messages. */
const HOW: Record<MetricUnit, string> = {
  times: 'a multiplier: write 1.5 or 1.5x',
  rate: 'a rate per second: write 12 or 12/s',
  share: 'a share from 0 to 1: write 0.95 or 95%',
  ms: 'a duration: write 20s, 500ms or 2m',
  count: 'a count: write 1200, 1.2k or 3M',
  tokens: 'a token count: write 50000, 50k or 1.5M',
};

/** Multipliers of each unit's suffixes; `%` divides (95 / 100 is 0.95 exactly, 95 × 0.01 is not). */
const SCALE: Record<MetricUnit, Record<string, number>> = {
  times: { '': 1, x: 1, '×': 1 },
  rate: { '': 1, '/s': 1 },
  share: { '': 1, '%': 100 },
  ms: {},
  count: { '': 1, k: 1e3, K: 1e3, M: 1e6 },
  tokens: { '': 1, k: 1e3, K: 1e3, M: 1e6 },
};

/**
 * A threshold in the unit of `metric`: `1.5x`, `95%`, `20s`, `12k`. A duration needs its
 * unit (a bare `30` could be seconds or milliseconds); a share above 1 without `%` is refused
 * (`successRate > 95` means 95 %, surely). `name` is the metric as written, for messages.
 */
export function parseThreshold(text: string, metric: Metric, name: string): number {
  const bad = (why: string): GateError =>
    new GateError(`${JSON.stringify(text)} does not fit ${name}${why}: ${name} is ${HOW[metric.unit]}`);
  if (metric.unit === 'ms') {
    const ms = parseDuration(text.replace(/min$/, 'm'));
    if (ms === undefined || /^[\d.]+$/.test(text)) throw bad(/^[\d.]+$/.test(text) ? ' (no unit)' : '');
    return ms;
  }
  const m = NUMBER.exec(text);
  if (m === null) throw bad('');
  const scale = SCALE[metric.unit][m[2]];
  if (scale === undefined) throw bad(hint(metric, m[2], name));
  const value = m[2] === '%' ? Number(m[1]) / scale : Number(m[1]) * scale;
  if (metric.unit === 'share' && m[2] === '' && (value > 1 || value < 0)) throw bad(' (a share is 0 to 1)');
  return value;
}

/** Why a unit suffix is wrong, where a likely mix-up has a better answer. */
function hint(metric: Metric, suffix: string, name: string): string {
  if (metric.unit === 'rate' && suffix === '%' && /goodput$/.test(name)) {
    return ' (goodput is root tasks ok within their deadline per second; their share of those offered is successRate, e.g. successRate > 95%)';
  }
  return ` (unit ${JSON.stringify(suffix)})`;
}
