import type { Io } from './io.js';

/**
 * Whether output gets colour: NO_COLOR (any value) always wins; FORCE_COLOR (any value but
 * `0` or `false`) turns it on in a pipe too (CI logs that render escapes); else only on a TTY.
 */
export function colorWanted(io: Pick<Io, 'isTTY' | 'env'>): boolean {
  if (io.env.NO_COLOR !== undefined) return false;
  const force = io.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return io.isTTY;
}
