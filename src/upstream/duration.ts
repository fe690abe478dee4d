// Durations as people write them (`30s`, `1m30s`): scenarios, flags and the fake upstream's
// control API all read them here.
/** Milliseconds per unit a scenario may write a duration in. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** One `<number><unit>` part; a duration is one or more of them (`1m30s`). */
const PART = /(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)/y;

/**
 * A duration as scenarios write it, in ms: a number is already ms; a string is one or more
 * `<number><unit>` parts with units ms, s, m, h (`500ms`, `2s`, `1.5m`, `1h`, `1m30s`), or a
 * bare number string (ms). Returns `undefined` for anything else, negatives included: callers
 * turn that into a message naming the path.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^(\d+(\.\d*)?|\.\d+)$/.test(text)) return Number(text);
  if (text === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (m === null) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]];
  }
  return total;
}

/** The shortest exact way to write `ms` back (`120000` → `2m`, `1500` → `1.5s`), for messages. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  // The largest unit that reads back exactly: 531514.59s would parse as 531514589.99999994 ms.
  const exact = (factor: number): boolean => (ms / factor) * factor === ms;
  if (ms >= 3_600_000 && ms % 360_000 === 0 && exact(3_600_000)) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 6_000 === 0 && exact(60_000)) return `${ms / 60_000}m`;
  if (ms >= 1_000 && ms % 10 === 0 && exact(1_000)) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
