import { progressLine } from '../../report/progress-line.js';
import { NoTargetError, TargetRefusedError, UpstreamControlError } from '../../run/live/live-errors.js';
import { liveResumeProblem } from '../../run/live/live-resume.js';
import { SETTLE_DEFAULTS } from '../../run/live/settle-defaults.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult } from '../../run/metrics/result.js';
import { formatDuration, parseDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import { stopCause, UsageError, type Io, type StopCause } from '../io.js';
import { partialIf, type Executed } from './executed.js';
import { Playback } from '../playback.js';
import { LiveSession, type LiveSettings, type LiveVariant } from './live-session.js';
import type { FleetFlags } from './run-fleet.js';

/** What `--mode live` adds to a run's flags. */
export interface LiveFlags {
  /** Base URL of an OpenAI-compatible endpoint; without it a fake upstream runs in-process. */
  target?: string;
  /** `Name: value`, repeatable. */
  header?: string[];
  connections?: string;
  /** The `stormlab serve` behind the --target gateway: faults go in there, its counters are read. */
  upstream?: string;
  /** With --upstream: how long the upstream must have nothing in flight before hop 2 is read. */
  settleQuiet?: string;
  /** With --upstream: the longest wait for that after the driver stopped. */
  settleTimeout?: string;
}

/** Checks `--target`, `--header`, `--connections`, `--upstream` and the settle flags. */
export function liveSettings(flags: LiveFlags): LiveSettings {
  const headers: Record<string, string> = {};
  for (const h of flags.header ?? []) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*)$/.exec(h);
    if (m === null) throw new UsageError(`--header: expected 'Name: value', got ${JSON.stringify(h)}`);
    headers[m[1].toLowerCase()] = m[2].trim();
  }
  let connections: number | undefined;
  if (flags.connections !== undefined) {
    connections = Number(flags.connections);
    if (!/^\s*\d+\s*$/.test(flags.connections) || connections < 1)
      throw new UsageError(`--connections: expected a positive integer, got ${JSON.stringify(flags.connections)}`);
  }
  checkUrl('--target', flags.target);
  checkUrl('--upstream', flags.upstream);
  if (flags.upstream !== undefined && flags.target === undefined)
    throw new UsageError(
      '--upstream: only with --target (the gateway in front of it); without --target the fake upstream runs in-process',
    );
  return { target: flags.target, headers, connections, upstream: flags.upstream, settle: settleOptions(flags) };
}

/** `--settle-quiet` and `--settle-timeout` (durations with a unit, 0 and up), only with --upstream. */
function settleOptions(flags: LiveFlags): LiveSettings['settle'] {
  const read = (flag: string, raw: string | undefined, fallback: number): number => {
    if (raw === undefined) return fallback;
    if (flags.upstream === undefined)
      throw new UsageError(`${flag}: only with --upstream (hop 2 is read from the upstream behind the gateway)`);
    const ms = parseDuration(raw);
    if (ms === undefined || /^\s*[\d.]+\s*$/.test(raw))
      throw new UsageError(`${flag}: expected a duration with a unit, like 5s or 500ms, got ${JSON.stringify(raw)}`);
    return ms;
  };
  const quietMs = read('--settle-quiet', flags.settleQuiet, SETTLE_DEFAULTS.quietMs);
  const timeoutMs = read('--settle-timeout', flags.settleTimeout, SETTLE_DEFAULTS.timeoutMs);
  if (quietMs > timeoutMs)
    throw new UsageError(
      `--settle-quiet ${formatDuration(quietMs)} is longer than --settle-timeout ${formatDuration(timeoutMs)}: the wait could only time out`,
    );
  return { quietMs, timeoutMs };
}

function checkUrl(flag: string, value: string | undefined): void {
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new UsageError(`${flag}: expected an http(s) URL like http://localhost:8080, got ${JSON.stringify(value)}`);
}

/** Progress lines of a plain live run: every tenth of the run (at least a second apart). */
const PLAIN_STEPS = 10;

/**
 * Runs the scenario's variants live: in the dashboard on a terminal (q / Ctrl-C stop it), else
 * with a plain progress line every tenth of the run (SIGINT stops it). Either way a stopped
 * run still gives its partial result: the variants that ran, each up to where it got.
 */
export async function executeLive(
  io: Io,
  scenario: Scenario,
  runs: Array<{ name: string; scenario: Scenario }>,
  flags: LiveFlags & FleetFlags & { ui?: boolean; quiet?: boolean },
): Promise<Executed> {
  // The harness's own engine (no gateway under test) must be the simulated one.
  if (flags.target === undefined)
    for (const r of runs) {
      const problem = liveResumeProblem(r.scenario, r.name);
      if (problem !== undefined) throw new UsageError(problem);
    }
  if (flags.queue !== undefined || flags.workers !== undefined)
    return (await import('./run-fleet.js')).executeFleet(io, scenario, runs, flags);
  if (flags.fleetWait !== undefined)
    throw new UsageError('--fleet-wait: only with --queue and --workers (a live run on a fleet)');
  const settings = liveSettings(flags);
  if (settings.target !== undefined && settings.upstream === undefined && scenario.upstream.faults.length > 0) {
    io.stderr(
      `note: the scenario's fault phases are not injected into ${settings.target}; give --upstream (the stormlab serve behind it) to inject them there\n`,
    );
  }
  const session = new LiveSession(io, runs, settings);
  const playback = new Playback(scenario, session.steps(), 1);
  let signal: StopCause | undefined;
  // With faults installed behind a gateway, a second stop must reach the session too (it reads hop 2 at
  // once): the first one subscribes again. A crash puts the upstream's own faults back before the process ends.
  const offStops: Array<() => void> = [];
  const onStop = (s: string): void => {
    const cause = stopCause(s);
    signal ??= cause;
    playback.stop();
    session.stop(cause);
    const again = settings.upstream !== undefined && offStops.length === 1 ? io.onStop?.(onStop) : undefined;
    if (again !== undefined) offStops.push(again);
  };
  const offStop = io.onStop?.(onStop);
  if (offStop !== undefined) offStops.push(offStop);
  const offCrash = settings.upstream === undefined ? undefined : io.onCrash?.(() => session.restore());
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
  if (session.error instanceof TargetRefusedError)
    throw new UsageError(`--target ${settings.target ?? ''}: ${session.error.message}`);
  if (session.error instanceof UpstreamControlError) throw new UsageError(`--upstream ${session.error.message}`);
  if (session.error !== undefined) throw session.error;
  const stopped = playback.interrupted || session.interrupted;
  if (stopped) {
    io.stderr(
      `stopped at ${formatDuration(Math.round(playback.now))} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
    );
  }
  if (!stopped && settings.target !== undefined) neverAnswered(settings.target, session.variants);
  reportRequestErrors(io, session.variants);
  return partialIf(
    collectLive(scenario, session.variants),
    stopped ? (signal ?? 'SIGINT') : undefined,
    Math.round(playback.now),
  );
}

/** Plain progress lines (every tenth of the run) until the session is done; the last line at its end. */
export async function plainProgress(
  io: Io,
  scenario: Scenario,
  session: { done: Promise<void> },
  playback: Playback,
  quiet: boolean,
): Promise<void> {
  const every = Math.max(1000, scenario.durationMs / PLAIN_STEPS);
  const line = (): void => {
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

/** Requests that got no HTTP answer are worth a line: a wrong --target looks like an outage otherwise. */
function reportRequestErrors(io: Io, variants: LiveVariant[]): void {
  for (const v of variants) {
    const errors = v.sim.transport.errorCodes;
    if (errors.size === 0) continue;
    const { total, codes } = errorTally(errors);
    io.stderr(`${v.name}: ${total} request${total === 1 ? '' : 's'} got no HTTP answer (${codes})\n`);
  }
}

/** Errors by code as a line says them, most frequent first: `ECONNREFUSED ×40, UND_ERR_SOCKET ×2`. */
function errorTally(errors: ReadonlyMap<string, number>): { total: number; codes: string } {
  const total = [...errors.values()].reduce((a, b) => a + b, 0);
  const codes = [...errors]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  return { total, codes };
}

/**
 * A whole run against a --target that never gave one HTTP answer measured nothing but that
 * nothing answers there: exit 4 with one line (EXIT.noTarget), never a summary of an "outage".
 */
function neverAnswered(target: string, variants: LiveVariant[]): void {
  const ran = variants.filter((v) => v.sim.started);
  if (ran.length === 0 || ran.some((v) => v.sim.transport.answers > 0)) return;
  const errors = new Map<string, number>();
  for (const v of ran)
    for (const [code, n] of v.sim.transport.errorCodes) errors.set(code, (errors.get(code) ?? 0) + n);
  if (errors.size === 0) return;
  const { total, codes } = errorTally(errors);
  throw new NoTargetError(target, total, codes);
}

/** The result file of the variants that ran (a stopped compare may not have reached them all). */
function collectLive(scenario: Scenario, variants: LiveVariant[]): ResultFile {
  const ran = variants.filter((v) => v.sim.started);
  const results: RunResult[] = ran.map((v) => {
    const r = v.sim.result();
    return v.hop === undefined || r.live === undefined ? r : { ...r, live: { ...r.live, upstream: v.hop } };
  });
  const rate = (n: number, ms: number): number => (ms > 0 ? Math.round((n / ms) * 1000) : 0);
  const wallMs = ran.reduce((n, v) => n + v.wallMs, 0);
  const attempts = results.reduce((n, r) => n + r.upstream.attempts, 0);
  return {
    schema: RESULT_SCHEMA,
    scenario: scenario.name,
    seed: scenario.seed,
    mode: 'live',
    variants: results,
    timing: {
      wallMs,
      attemptsPerSec: rate(attempts, wallMs),
      variants: ran.map((v, i) => ({
        name: v.name,
        wallMs: v.wallMs,
        attemptsPerSec: rate(results[i].upstream.attempts, v.wallMs),
      })),
    },
  };
}
