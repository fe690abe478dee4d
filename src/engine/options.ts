import { OptionError } from './errors.js';

// Defaults and range checks for constructor options. Each check throws an `OptionError` whose
// message names the option and shows the bad value: `retryBudget.ratio must be a number >= 0
// and <= 1000, got -1`.

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

/**
 * A number option's range. Each primitive lists its options' ranges in one table
 * (`RETRY_BUDGET_RANGES`, …): its constructor checks them with `checkRange`, and the scenario
 * schema builds its own checks from the same table, so a range is written once.
 */
export interface Range {
  readonly min: number;
  /** `min` itself is refused (`> min` rather than `>= min`). */
  readonly above?: boolean;
  /** @default Infinity (for an integer, Number.MAX_SAFE_INTEGER) */
  readonly max?: number;
  readonly integer?: boolean;
}

/** Frozen ranges used by many options. */
export const AT_LEAST_0: Range = Object.freeze({ min: 0 });
export const ABOVE_0: Range = Object.freeze({ min: 0, above: true });
export const INTEGER_AT_LEAST_1: Range = Object.freeze({ min: 1, integer: true });

/** A range with a lower bound known only at run time (`capMs` at least `baseMs`). */
export function atLeast(range: Range, min: number): Range {
  return { ...range, min: Math.max(range.min, min) };
}

/**
 * What a value in `range` is, as messages say it: `a number >= 0`, `a number > 0 and <= 1`,
 * `an integer from 1 to 100`. `unit` writes the bounds (a duration's, say) and `kind` names
 * the value (`a duration`).
 */
export function rangeText(range: Range, unit: (n: number) => string = String, kind?: string): string {
  const max = range.max ?? Infinity;
  if (range.integer && kind === undefined) {
    const top = max >= Number.MAX_SAFE_INTEGER ? undefined : max;
    const low = range.above ? Math.floor(range.min) + 1 : Math.ceil(range.min);
    return top === undefined ? `an integer >= ${unit(low)}` : `an integer from ${unit(low)} to ${unit(top)}`;
  }
  const low = `${range.above ? '>' : '>='} ${unit(range.min)}`;
  return `${kind ?? 'a number'} ${max === Infinity ? low : `${low} and <= ${unit(max)}`}`;
}

/** Whether `value` is a number in `range` (NaN never is). */
export function inRange(range: Range, value: unknown): value is number {
  if (typeof value !== 'number' || Number.isNaN(value)) return false;
  if (range.integer && !Number.isInteger(value)) return false;
  if (range.above ? value <= range.min : value < range.min) return false;
  return value <= (range.max ?? (range.integer ? Number.MAX_SAFE_INTEGER : Infinity));
}

/** `value` if it is in `range`; else an `OptionError` naming `name`, carrying the range and the value. */
export function checkRange(name: string, value: unknown, range: Range): number {
  if (inRange(range, value)) return value;
  throw new OptionError(`${name} must be ${rangeText(range)}, got ${show(value)}`, name, { range, value });
}

/** Checks each option of `o` that `ranges` lists, named `${prefix}.${key}`. */
export function checkRanges<T extends object>(prefix: string, o: T, ranges: Partial<Record<keyof T, Range>>): void {
  for (const key of Object.keys(ranges) as Array<keyof T & string>) {
    const range = ranges[key];
    if (range !== undefined) checkRange(`${prefix}.${key}`, o[key], range);
  }
}

function fail(name: string, expected: string, value: unknown): never {
  throw new OptionError(`${name} must be ${expected}, got ${show(value)}`, name, { value });
}

export function checkNumber(
  name: string,
  value: unknown,
  min: number,
  max = Infinity,
  opts?: { minExclusive?: boolean },
): number {
  return checkRange(name, value, { min, max, above: opts?.minExclusive === true });
}

export function checkPositive(name: string, value: unknown): number {
  return checkRange(name, value, ABOVE_0);
}

export function checkInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return checkRange(name, value, { min, max, integer: true });
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
