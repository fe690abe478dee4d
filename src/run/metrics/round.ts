/**
 * Rounds to 6 significant digits so result JSON is byte-stable across platforms: the last
 * bits of a float sum can differ with evaluation order, 6 digits cannot (for ratios of
 * counts). `toPrecision` is exactly specified by ECMAScript, and so is the shortest
 * round-trip printing JSON uses. Non-finite values become 0 (JSON has no NaN/Infinity);
 * -0 becomes 0.
 */
export function round6(x: number): number {
  if (!Number.isFinite(x) || x === 0) return 0;
  return Number.isInteger(x) && Math.abs(x) < 1e15 ? x : Number(x.toPrecision(6));
}

/** `a ÷ b`, or 0 when `b` is 0 (an empty run has amplification 0, not NaN). */
export function ratio(a: number, b: number): number {
  return b > 0 ? a / b : 0;
}
