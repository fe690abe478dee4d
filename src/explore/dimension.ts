/** One searched parameter: a range of numbers, walked evenly or on a log scale. */
export interface Dimension {
  name: string;
  min: number;
  max: number;
  /** `log` spaces the grid evenly in log(value) (min must be above 0). @default 'linear' */
  scale?: 'linear' | 'log';
  /** Only whole numbers. @default false */
  integer?: boolean;
}

/** Value → [0, 1] along the dimension (in log terms on a log scale). */
export function toUnit(d: Dimension, v: number): number {
  if (d.max === d.min) return 0.5;
  if (d.scale === 'log') return Math.log(v / d.min) / Math.log(d.max / d.min);
  return (v - d.min) / (d.max - d.min);
}

export function fromUnit(d: Dimension, u: number): number {
  if (d.scale === 'log') return d.min * (d.max / d.min) ** u;
  return d.min + u * (d.max - d.min);
}

/** The value as evaluated: whole for integer dimensions, else `digits` significant digits, inside the range. */
export function snap(d: Dimension, v: number, digits: number): number {
  // 1e-17 from float error at a range's zero end is zero, not a value of its own.
  if (Math.abs(v) < Math.abs(d.max - d.min) * 1e-9) v = 0;
  const rounded = d.integer ? Math.round(v) : Number(v.toPrecision(digits));
  return Math.min(d.max, Math.max(d.min, rounded));
}
