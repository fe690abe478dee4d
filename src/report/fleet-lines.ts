import type { RunResult } from '../run/metrics/result.js';
import { formatCount } from './format.js';

/** Closed-loop users of a share, briefly: `85 users (1, 5, 6, 11, …)`. */
export function usersText(users: readonly number[]): string {
  const shown = users.slice(0, 6).join(', ');
  return `${formatCount(users.length)} user${users.length === 1 ? '' : 's'} (${shown}${users.length > 6 ? ', …' : ''})`;
}

const WORDS: Record<string, string> = {
  retryBudget: 'retry budget',
  throttle: 'throttle windows',
  breakerCounts: 'breaker counts',
  limits: 'token buckets',
  breakerState: 'breaker state (open, half-open)',
  concurrency: 'concurrency limit',
};

/**
 * The summary's fleet block: per variant driven by a fleet, each share's worker with its roots,
 * requests, clock offset and start lag, and which engine state was one across the fleet.
 */
export function fleetLines(vs: readonly RunResult[]): string[] {
  const lines: string[] = [];
  for (const v of vs) {
    const workers = v.live?.workers;
    if (workers === undefined) continue;
    lines.push(`${v.name}: ${workers.length} worker${workers.length === 1 ? '' : 's'}, one share each`);
    for (const w of workers) {
      const planned =
        w.plannedRoots === null ? usersText(w.users ?? []) : `${formatCount(w.plannedRoots)} roots planned`;
      lines.push(
        `  share ${w.share + 1}/${w.of} ${w.worker ?? '(none)'}: ${w.status}, ${planned}, ${formatCount(w.roots)} started, ${formatCount(w.sent)} requests, clock offset ${offsetText(w.offsetMs)} ms, start lag ${formatCount(w.startLagMs)} ms`,
      );
    }
    const s = v.live?.sharedState;
    if (s === undefined) continue;
    if (s.store === 'none') lines.push('  engine state: none (no layer runs the engine)');
    else {
      const say = (xs: string[]): string => (xs.length === 0 ? 'nothing' : xs.map((x) => WORDS[x] ?? x).join(', '));
      lines.push(`  shared through Redis: ${say(s.shared)}; each worker's own: ${say(s.perWorker)}`);
    }
  }
  return lines;
}

/** A clock offset to a tenth of a ms, never `-0.0` (an offset that rounds to nothing has no sign). */
function offsetText(ms: number): string {
  const t = ms.toFixed(1);
  return t === '-0.0' ? '0.0' : t;
}
