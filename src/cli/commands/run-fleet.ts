import { FLEET_DEFAULTS } from '../../explore/fleet-protocol.js';
import { QueueError, parseQueueUrl } from '../../explore/queue-target.js';
import { UpstreamControlError } from '../../run/live/live-errors.js';
import type { RunResult } from '../../run/metrics/result.js';
import { formatDuration, parseDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import { UsageError, type Io } from '../io.js';
import { driveSession, liveResultFile, reportRequestErrors } from './drive-session.js';
import { partialIf, type Executed } from './executed.js';
import { positiveInt } from './explore-args.js';
import { FleetSession, type FleetVariant } from './fleet-session.js';
import { checkQueueReachable } from './queue-args.js';
import { liveSettings, type LiveFlags } from './run-live.js';

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
    // A second stop reaches the session too, hop 2 or not: it must not end the process while the
    // workers send their last counters (with --upstream it reads hop 2 at once).
    const { playback, signal } = await driveSession(
      io,
      scenario,
      session,
      { secondStop: true, restoreOnCrash: settings.upstream !== undefined },
      flags,
    );
    if (session.error instanceof QueueError) throw new UsageError(session.error.message);
    if (session.error instanceof UpstreamControlError) throw new UsageError(`--upstream ${session.error.message}`);
    if (session.error !== undefined) throw session.error;
    const stopped = playback.interrupted || session.interrupted;
    if (stopped)
      io.stderr(
        `stopped at ${formatDuration(Math.round(playback.now))} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
      );
    for (const v of session.variants) reportRequestErrors(io, v.name, v.outcome?.errorCodes);
    return partialIf(
      liveResultFile(scenario, fleetResults(session.variants)),
      stopped ? (signal ?? 'SIGINT') : undefined,
      Math.round(playback.now),
    );
  } finally {
    await coordinator.close();
  }
}

/** Each variant the fleet ran: one merged result, with who drove what and what was shared. */
function fleetResults(variants: FleetVariant[]): Array<{ name: string; result: RunResult; wallMs: number }> {
  return variants.flatMap((v) => {
    if (v.outcome === undefined) return [];
    const r = v.outcome.result;
    const live = { ...r.live!, sharedState: v.fleet.sharedState };
    const result = { ...r, live: v.hop === undefined ? live : { ...live, upstream: v.hop } };
    return [{ name: v.name, result, wallMs: v.outcome.wallMs }];
  });
}
