import { OptionError } from './errors.js';

/**
 * Range checks for constructor options. Each throws an `OptionError` whose message names the
 * option and shows the bad value, e.g. `retryBudget.ratio must be a number >= 0, got -1`.
 */
/**
 * `defaults` with the options given on top, where an option given as `undefined` means the
 * default (as if it were left out): `{ ...defaults, ...options }` would let it erase one.
 */
export function withDefaults<T extends object>(defaults: T, options: Partial<T> | undefined): T {
  const o = { ...defaults };
  if (options == null) return o;
  for (const key of Object.keys(options) as Array<keyof T>) {
    const v = options[key];
    if (v !== undefined) o[key] = v as T[keyof T];
  }
  return o;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  return Object.prototype.toString.call(value);
}

function fail(name: string, expected: string, value: unknown): never {
  throw new OptionError(`${name} must be ${expected}, got ${show(value)}`, name);
}

export function checkNumber(
  name: string,
  value: unknown,
  min: number,
  max = Infinity,
  opts?: { minExclusive?: boolean },
): number {
  const low = opts?.minExclusive ? `> ${min}` : `>= ${min}`;
  const range = max === Infinity ? low : `${low} and <= ${max}`;
  if (typeof value !== 'number' || Number.isNaN(value)) fail(name, `a number ${range}`, value);
  if (opts?.minExclusive ? value <= min : value < min) fail(name, `a number ${range}`, value);
  if (value > max) fail(name, `a number ${range}`, value);
  return value;
}

export function checkPositive(name: string, value: unknown): number {
  return checkNumber(name, value, 0, Infinity, { minExclusive: true });
}

export function checkInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(name, max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`, value);
  }
  return value;
}

export function checkOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    fail(name, `one of ${allowed.join(', ')}`, value);
  }
  return value as T;
}

export function checkNonEmptyString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail(name, 'a non-empty string', value);
  return value;
}
