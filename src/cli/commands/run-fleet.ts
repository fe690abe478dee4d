import { FLEET_DEFAULTS } from '../../explore/fleet-protocol.js';
import { QueueError, parseQueueUrl } from '../../explore/queue-target.js';
import { UpstreamControlError } from '../../run/live/live-errors.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult } from '../../run/metrics/result.js';
import { formatDuration, parseDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import { stopCause, UsageError, type Io, type StopCause } from '../io.js';
import { Playback } from '../playback.js';
import { partialIf, type Executed } from './executed.js';
import { positiveInt } from './explore-args.js';
import { FleetSession, type FleetVariant } from './fleet-session.js';
import { checkQueueReachable } from './queue-args.js';
import { liveSettings, type LiveFlags, plainProgress } from './run-live.js';

/** What `--mode live --queue … --workers N` adds to a live run's flags. */
export interface FleetFlags {
  /** The Redis of the queue `stormlab worker`s take shares from. */
  queue?: string;
  /** How many workers drive the run, one share each. */
  workers?: string;
  /** How long to wait for that many to take their shares before refusing to start. */
  fleetWait?: string;
}

/** `--queue`, `--workers` and `--fleet-wait`, checked: a fleet needs all it needs, and a --target to drive. */
function fleetSettings(flags: FleetFlags & LiveFlags): { workers: number; waitMs: number } {
  if (flags.queue === undefined)
    throw new UsageError(
      '--workers: a live run on a fleet needs --queue redis://… (the Redis the `stormlab worker`s take shares from)',
    );
  if (flags.workers === undefined)
    throw new UsageError('--queue: with --mode live, say how many workers drive the run: --workers N');
  const workers = positiveInt('--workers', flags.workers, 1);
  if (flags.target === undefined)
    throw new UsageError(
      '--workers: a fleet drives one --target (start `stormlab serve` or your gateway where every worker reaches it, and give its URL)',
    );
  let waitMs: number = FLEET_DEFAULTS.waitMs;
  if (flags.fleetWait !== undefined) {
    const ms = parseDuration(flags.fleetWait);
    if (ms === undefined || ms <= 0 || /^\s*[\d.]+\s*$/.test(flags.fleetWait))
      throw new UsageError(
        `--fleet-wait: expected a duration with a unit, like 30s or 2m, got ${JSON.stringify(flags.fleetWait)}`,
      );
    waitMs = ms;
  }
  return { workers, waitMs };
}

/**
 * A live run driven by a fleet of `stormlab worker`s: the coordinator (this process) splits
 * each variant's roots into N shares, agrees the start, merges what the workers send back
 * into one result, and alone installs and restores hop 2's faults. The dashboard or plain
 * progress lines show the merged counters as they come.
 */
export async function executeFleet(
  io: Io,
  scenario: Scenario,
  runs: Array<{ name: string; scenario: Scenario }>,
  flags: LiveFlags & FleetFlags & { ui?: boolean; quiet?: boolean },
): Promise<Executed> {
  const settings = liveSettings(flags);
  const { workers, waitMs } = fleetSettings(flags);
  let target: ReturnType<typeof parseQueueUrl>;
  try {
    target = parseQueueUrl(flags.queue!);
  } catch (e) {
    if (e instanceof QueueError) throw new UsageError(e.message);
    throw e;
  }
  await checkQueueReachable(target);
  const { FleetCoordinator } = await import('../../explore/fleet-coordinator.js');
  const coordinator = await FleetCoordinator.open(target);
  try {
    if (!flags.quiet)
      io.stderr(
        `fleet: ${workers} worker${workers === 1 ? '' : 's'} on ${coordinator.where} drive ${settings.target}; waiting up to ${formatDuration(waitMs)} for them\n`,
      );
    const session = new FleetSession(io, coordinator, runs, { ...settings, target: settings.target! }, workers, waitMs);
    const playback = new Playback(scenario, session.steps(), 1);
    let signal: StopCause | undefined;
    const offStops: Array<() => void> = [];
    const onStop = (s: string): void => {
      const cause = stopCause(s);
      signal ??= cause;
      playback.stop();
      session.stop(cause);
      const again = offStops.length === 1 ? io.onStop?.(onStop) : undefined;
      if (again !== undefined) offStops.push(again);
    };
    const offStop = io.onStop?.(onStop);
    if (offStop !== undefined) offStops.push(offStop);
    const offCrash = settings.upstream === undefined ? undefined : io.onCrash?.(() => session.restore());
    try {
      if (io.terminal !== undefined && flags.ui !== false && io.env.CI !== 'true' && !flags.quiet) {
        const { showDashboard } = await import('../dashboard.js');
        await showDashboard(io, io.terminal, playback, (wallMs) => playback.tick(wallMs));
        if (playback.interrupted && signal === undefined) session.stop('SIGINT');
        await session.done;
      } else {
        await plainProgress(io, scenario, session, playback, flags.quiet === true);
      }
    } finally {
      for (const off of offStops) off();
      offCrash?.();
    }
    if (session.error instanceof QueueError) throw new UsageError(session.error.message);
    if (session.error instanceof UpstreamControlError) throw new UsageError(`--upstream ${session.error.message}`);
    if (session.error !== undefined) throw session.error;
    const stopped = playback.interrupted || session.interrupted;
    if (stopped)
      io.stderr(
        `stopped at ${formatDuration(Math.round(playback.now))} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
      );
    for (const v of session.variants) reportErrors(io, v);
    return partialIf(
      collectFleet(scenario, session.variants),
      stopped ? (signal ?? 'SIGINT') : undefined,
      Math.round(playback.now),
    );
  } finally {
    await coordinator.close();
  }
}

function reportErrors(io: Io, v: FleetVariant): void {
  const errors = v.outcome?.errorCodes;
  if (errors === undefined || errors.size === 0) return;
  const total = [...errors.values()].reduce((a, b) => a + b, 0);
  const codes = [...errors]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  io.stderr(`${v.name}: ${total} request${total === 1 ? '' : 's'} got no HTTP answer (${codes})\n`);
}

/** The result file of the variants the fleet ran: each one merged result, with who drove what and what was shared. */
function collectFleet(scenario: Scenario, variants: FleetVariant[]): ResultFile {
  const ran = variants.filter((v) => v.outcome !== undefined);
  const results: RunResult[] = ran.map((v) => {
    const r = v.outcome!.result;
    const live = { ...r.live!, sharedState: v.fleet.sharedState };
    return { ...r, live: v.hop === undefined ? live : { ...live, upstream: v.hop } };
  });
  const rate = (n: number, ms: number): number => (ms > 0 ? Math.round((n / ms) * 1000) : 0);
  const walls = ran.map((v) => v.outcome!.wallMs);
  const wallMs = walls.reduce((a, b) => a + b, 0);
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
        wallMs: walls[i],
        attemptsPerSec: rate(results[i].upstream.attempts, walls[i]),
      })),
    },
  };
}
