import { progressLine } from '../../report/progress-line.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult } from '../../run/metrics/result.js';
import type { Scenario } from '../../scenario/scenario.js';
import { stopCause, type Io, type StopCause } from '../io.js';
import { Playback, type Steppable } from '../playback.js';

/** What `driveSession` shows and stops: a live run's variants in one process, or on a fleet. */
export interface DrivenSession {
  readonly done: Promise<void>;
  steps(): Array<{ name: string; sim: Steppable }>;
  stop(cause: StopCause): void;
  /** Puts the upstreams behind a gateway back as they were (a crash's last act). */
  restore(): Promise<unknown>;
  /** No progress line while this is true (a fleet waiting for its workers, or refused by them, has nothing to show). */
  readonly waiting?: boolean;
}

/** How a session hears stops. */
export interface StopPolicy {
  /**
   * Whether a second stop (Ctrl-C during hop 2's settling, or while a fleet's workers send their
   * last counters) reaches the session too: the first one subscribes again, once. Without it the
   * second stop is the process's default one.
   */
  secondStop: boolean;
  /** Faults are installed in another server (--upstream): a crash puts them back before the process ends. */
  restoreOnCrash: boolean;
}

/**
 * Plays a live session to its end: in the dashboard on a terminal (q / Ctrl-C stop it), else with
 * plain progress lines. A stop stops the playback and the session (which keeps what it has). The
 * first stop's cause is returned, with the playback (its clock, whether it was interrupted).
 */
export async function driveSession(
  io: Io,
  scenario: Scenario,
  session: DrivenSession,
  policy: StopPolicy,
  flags: { ui?: boolean; quiet?: boolean },
): Promise<{ playback: Playback; signal: StopCause | undefined }> {
  const playback = new Playback(scenario, session.steps(), 1);
  let signal: StopCause | undefined;
  const offStops: Array<() => void> = [];
  const onStop = (s: string): void => {
    const cause = stopCause(s);
    signal ??= cause;
    playback.stop();
    session.stop(cause);
    const again = policy.secondStop && offStops.length === 1 ? io.onStop?.(onStop) : undefined;
    if (again !== undefined) offStops.push(again);
  };
  const offStop = io.onStop?.(onStop);
  if (offStop !== undefined) offStops.push(offStop);
  const offCrash = policy.restoreOnCrash ? io.onCrash?.(() => session.restore()) : undefined;
  try {
    if (io.terminal !== undefined && flags.ui !== false && io.env.CI !== 'true' && !flags.quiet) {
      const { showDashboard } = await import('../dashboard.js');
      await showDashboard(io, io.terminal, playback, (wallMs) => playback.tick(wallMs));
      // q in the dashboard is the user's stop, as SIGINT is (a second q, during hop 2's settling, skips it).
      if (playback.interrupted && signal === undefined) session.stop('SIGINT');
      await session.done;
    } else {
      await plainProgress(io, scenario, session, playback, flags.quiet === true);
    }
  } finally {
    for (const off of offStops) off();
    offCrash?.();
  }
  return { playback, signal };
}

/** Progress lines of a plain live run: every tenth of the run (at least a second apart). */
const PLAIN_STEPS = 10;

/**
 * Plain progress lines (every tenth of the run) until the session is done; the last line at its
 * end. None while the session is `waiting`.
 */
async function plainProgress(
  io: Io,
  scenario: Scenario,
  session: DrivenSession,
  playback: Playback,
  quiet: boolean,
): Promise<void> {
  const every = Math.max(1000, scenario.durationMs / PLAIN_STEPS);
  const line = (): void => {
    if (session.waiting === true) return;
    playback.tick(0);
    io.stderr(`${progressLine(playback.frame())}\n`); // stdout keeps only the summary
  };
  const timer = quiet ? undefined : setInterval(line, every);
  try {
    await session.done;
  } finally {
    if (timer !== undefined) clearInterval(timer);
  }
  if (!quiet) line();
}

/** Errors by code as a line says them, most frequent first: `ECONNREFUSED ×40, UND_ERR_SOCKET ×2`. */
export function errorTally(errors: ReadonlyMap<string, number>): { total: number; codes: string } {
  const total = [...errors.values()].reduce((a, b) => a + b, 0);
  const codes = [...errors]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  return { total, codes };
}

/** Requests that got no HTTP answer are worth a line: a wrong --target looks like an outage otherwise. */
export function reportRequestErrors(io: Io, name: string, errors: ReadonlyMap<string, number> | undefined): void {
  if (errors === undefined || errors.size === 0) return;
  const { total, codes } = errorTally(errors);
  io.stderr(`${name}: ${total} request${total === 1 ? '' : 's'} got no HTTP answer (${codes})\n`);
}

/** The result file of a live run's variants that ran, each with its wall time. */
export function liveResultFile(
  scenario: Scenario,
  ran: Array<{ name: string; result: RunResult; wallMs: number }>,
): ResultFile {
  const rate = (n: number, ms: number): number => (ms > 0 ? Math.round((n / ms) * 1000) : 0);
  const wallMs = ran.reduce((n, v) => n + v.wallMs, 0);
  const attempts = ran.reduce((n, v) => n + v.result.upstream.attempts, 0);
  return {
    schema: RESULT_SCHEMA,
    scenario: scenario.name,
    seed: scenario.seed,
    mode: 'live',
    variants: ran.map((v) => v.result),
    timing: {
      wallMs,
      attemptsPerSec: rate(attempts, wallMs),
      variants: ran.map((v) => ({
        name: v.name,
        wallMs: v.wallMs,
        attemptsPerSec: rate(v.result.upstream.attempts, v.wallMs),
      })),
    },
  };
}
