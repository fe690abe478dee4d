import { OptionError } from '../engine/errors.js';
import type { Dist } from './distribution.js';

const SHAPES = 'a number of ms or {dist: const | uniform | exponential | lognormal | choice, …}';

/**
 * Checks a distribution of times given outside a scenario (the control API's `addMs`): every
 * number finite and >= 0, its parameters in order. Throws an `OptionError` naming `name`.
 * (A scenario's distributions are checked by its schema, `scenario/dist-schema.ts`.)
 */
export function checkTimeDist(name: string, d: unknown): Dist {
  const bad = (why: string): never => {
    throw new OptionError(`${name} ${why}`, name);
  };
  const ms = (v: unknown, what: string, positive = false): number => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0))
      bad(
        `${what === '' ? '' : `${what} `}must be a number of ms ${positive ? '> 0' : '>= 0'}, got ${JSON.stringify(v) ?? 'nothing'}`,
      );
    return v as number;
  };
  if (typeof d === 'number') return ms(d, '');
  if (d === null || typeof d !== 'object' || Array.isArray(d))
    return bad(`must be ${SHAPES}, got ${JSON.stringify(d)}`);
  const o = d as Record<string, unknown>;
  const only = (keys: string[]) => {
    const extra = Object.keys(o).find((k) => k !== 'dist' && !keys.includes(k));
    if (extra !== undefined) bad(`has an unknown field ${JSON.stringify(extra)} for dist ${String(o.dist)}`);
  };
  switch (o.dist) {
    case 'const':
      only(['value']);
      return { dist: 'const', value: ms(o.value, 'value') };
    case 'uniform': {
      only(['min', 'max']);
      const min = ms(o.min, 'min');
      const max = ms(o.max, 'max');
      if (max < min) bad(`max must be at least min (${min}), got ${max}`);
      return { dist: 'uniform', min, max };
    }
    case 'exponential':
      only(['mean']);
      return { dist: 'exponential', mean: ms(o.mean, 'mean', true) };
    case 'lognormal': {
      only(['median', 'p99']);
      const median = ms(o.median, 'median', true);
      const p99 = ms(o.p99, 'p99', true);
      if (p99 < median) bad(`p99 must be at least median (${median}), got ${p99}`);
      return { dist: 'lognormal', median, p99 };
    }
    case 'choice': {
      only(['values', 'weights']);
      if (!Array.isArray(o.values) || o.values.length === 0) bad('values must be a list of at least one number of ms');
      const values = (o.values as unknown[]).map((v, i) => ms(v, `values[${i}]`));
      if (o.weights === undefined) return { dist: 'choice', values };
      if (!Array.isArray(o.weights) || o.weights.length !== values.length)
        bad(`weights must be a list of ${values.length} numbers (one per value)`);
      const weights = (o.weights as unknown[]).map((v, i) => ms(v, `weights[${i}]`));
      if (!(weights.reduce((a, b) => a + b, 0) > 0)) bad('weights must add up to more than 0');
      return { dist: 'choice', values, weights };
    }
    default:
      return bad(`must be ${SHAPES}, got dist ${JSON.stringify(o.dist)}`);
  }
}
