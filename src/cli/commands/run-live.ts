import { NoTargetError, TargetRefusedError, UpstreamControlError } from '../../run/live/live-errors.js';
import { liveResumeProblem } from '../../run/live/live-resume.js';
import { SETTLE_DEFAULTS } from '../../run/live/settle-defaults.js';
import { formatDuration, parseDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import { UsageError, type Io } from '../io.js';
import { driveSession, errorTally, liveResultFile, reportRequestErrors } from './drive-session.js';
import { partialIf, type Executed } from './executed.js';
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
  // With faults installed behind a gateway, a second stop must reach the session too (it reads hop 2 at once).
  const behind = settings.upstream !== undefined;
  const { playback, signal } = await driveSession(
    io,
    scenario,
    session,
    { secondStop: behind, restoreOnCrash: behind },
    flags,
  );
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
  const ran = session.variants.filter((v) => v.sim.started);
  if (!stopped && settings.target !== undefined) neverAnswered(settings.target, ran);
  for (const v of session.variants) reportRequestErrors(io, v.name, v.sim.transport.errorCodes);
  const results = ran.map((v) => {
    const r = v.sim.result();
    const result = v.hop === undefined || r.live === undefined ? r : { ...r, live: { ...r.live, upstream: v.hop } };
    return { name: v.name, result, wallMs: v.wallMs };
  });
  return partialIf(
    liveResultFile(scenario, results),
    stopped ? (signal ?? 'SIGINT') : undefined,
    Math.round(playback.now),
  );
}

/**
 * A whole run against a --target that never gave one HTTP answer measured nothing but that
 * nothing answers there: exit 4 with one line (EXIT.noTarget), never a summary of an "outage".
 */
function neverAnswered(target: string, ran: LiveVariant[]): void {
  if (ran.length === 0 || ran.some((v) => v.sim.transport.answers > 0)) return;
  const errors = new Map<string, number>();
  for (const v of ran)
    for (const [code, n] of v.sim.transport.errorCodes) errors.set(code, (errors.get(code) ?? 0) + n);
  if (errors.size === 0) return;
  const { total, codes } = errorTally(errors);
  throw new NoTargetError(target, total, codes);
}
