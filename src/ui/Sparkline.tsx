import { Text } from 'ink';
import type { Tone } from './line.js';
import { Lines } from './Lines.js';

/** Eight levels; a space is "no value" (zero, or before the series began). */
const BLOCKS = ' ▁▂▃▄▅▆▇█';

/**
 * The last `width` values as unicode blocks, scaled so `max` (default: the largest value shown)
 * is a full block. Any value above zero shows at least `▁`, so a trickle is not mistaken for
 * nothing; fewer values than `width` are right-aligned (the newest is always at the right).
 */
export function sparkline(values: readonly number[], width: number, max?: number): string {
  if (width <= 0) return '';
  const shown = values.slice(Math.max(0, values.length - width));
  const top = max ?? Math.max(0, ...shown.filter(Number.isFinite));
  const cells = shown.map((v) => {
    if (!Number.isFinite(v) || v <= 0 || top <= 0) return BLOCKS[0];
    return BLOCKS[Math.min(8, Math.max(1, Math.ceil((v / top) * 8)))];
  });
  return ' '.repeat(width - cells.length) + cells.join('');
}

export interface SparklineProps {
  values: readonly number[];
  /** Columns, fixed: the output is always exactly this wide. */
  width: number;
  /** The value drawn as a full block. @default the largest value shown */
  max?: number;
  tone?: Tone;
  color: boolean;
}

/** A fixed-width unicode block sparkline of the last `width` values. */
export function Sparkline({ values, width, max, tone = 'plain', color }: SparklineProps) {
  const text = sparkline(values, width, max);
  if (width <= 0) return <Text />;
  return <Lines lines={[[{ text, tone }]]} width={width} color={color} />;
}
