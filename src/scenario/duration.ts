import { type Range, rangeText } from '../engine/options.js';
import { formatDuration } from '../upstream/duration.js';

// Durations live with the upstream's timeline, which the fake upstream's control API reads too.
export { formatDuration, parseDuration } from '../upstream/duration.js';

/** What a duration in `range` is, as messages say it: `a duration above 0`, `a duration >= 40s`. */
export function durationRangeText(range: Range): string {
  if (range.min === 0 && (range.max ?? Infinity) === Infinity) return range.above ? 'a duration above 0' : 'a duration';
  return rangeText(range, formatDuration, 'a duration');
}
