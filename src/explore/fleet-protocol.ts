import type { CollectorState } from '../run/metrics/collector.js';
import type { LiveFigures } from '../run/metrics/result.js';
import type { UpstreamStats } from '../upstream/upstream-model.js';

/** The BullMQ job name of a live share (the points of sweeps and tunes are `point`). */
export const LIVE_SHARE_JOB = 'live-share';

/** The fleet's timings; the wait for workers is `--fleet-wait`. */
export const FLEET_DEFAULTS = {
  /** How long the coordinator waits for N workers to take their shares before it refuses to start. */
  waitMs: 30_000,
  /** From the agreed instant being set to the start: long enough for every worker to read it (they look every `pollMs`). */
  leadMs: 500,
  /** How often a worker looks at the run's control (start, stop). */
  pollMs: 50,
  /** How often a driving worker sends its counters (its heartbeat). */
  heartbeatMs: 1000,
  /** A driving worker not heard from for this long is lost: its share is named and left out. */
  lostMs: 5000,
} as const;

/** The fleet's timings, ms (tests shorten them). */
export type FleetTimings = Record<keyof typeof FLEET_DEFAULTS, number>;

/** What one worker is asked to drive: one share of one variant of a live run. */
export interface LiveShareJob {
  /** The fleet run (one variant of one `run|compare`): its keys are `stormlab:fleet:<run>:…`. */
  run: string;
  share: number;
  of: number;
  /** The variant's name, as its result names it. */
  name: string;
  /** The effective scenario (the file, the variant's overrides, the command line's), as JSON under `file`. */
  scenario: { file: string; text: string };
  target: string;
  headers: Record<string, string>;
  connections: number;
  /** Keep the engines' state in Redis (the fleet's shared state) rather than each worker's. */
  sharedState: boolean;
  /**
   * How long the coordinator waits for N workers to take their shares (`--fleet-wait`). A
   * worker does not count it down itself: it gives its share up when the coordinator's
   * `alive` key lapses (the coordinator went away) or the run is stopped.
   */
  waitMs: number;
}

/** A worker's word that it holds a share and is ready: who it is, and its clock against Redis's. */
export interface ShareReady {
  worker: string;
  /** Redis's clock minus this worker's, ms (from the TIME round trip with the least delay). */
  offsetMs: number;
  rttMs: number;
}

/** What a driving worker sends once a second (BullMQ progress) and, with `final`, at its end (the job's return value). */
export interface ShareReport {
  run: string;
  share: number;
  worker: string;
  /** Ms since the agreed start, on this worker's clock corrected by its offset. */
  t: number;
  state: CollectorState;
  upstream: UpstreamStats;
  /** Requests this worker wrote to the target. */
  sent: number;
  final: boolean;
  offsetMs: number;
  /** How long after the agreed instant this worker started driving, ms (0 or more). */
  startLagMs: number;
  live?: LiveFigures;
  /** Requests that got no HTTP answer, by code. */
  errorCodes?: Record<string, number>;
  /** Stopped before its share's end (the coordinator's stop, or the worker's own). */
  interrupted?: boolean;
  /** The shared engine state's link to Redis broke during the run (decisions went on locally). */
  storeUnavailable?: number;
}

/** A job this worker did not drive: another had claimed its share, or the run was over before it started. */
export interface ShareSkipped {
  run: string;
  share: number;
  skipped: string;
}

/**
 * The Redis keys of one fleet run: who holds a share and is ready (`ready`, one field per
 * share), the start and stop (`control`), the shares' claims, and `alive`, a key the
 * coordinator keeps refreshing (TTL `lostMs`) until the start is set: a waiting worker gives
 * its share up only when it lapses.
 */
export function fleetKeys(run: string): { ready: string; control: string; claims: string; alive: string } {
  const base = `stormlab:fleet:${run}`;
  return { ready: `${base}:ready`, control: `${base}:control`, claims: `${base}:claims`, alive: `${base}:alive` };
}

/** Fleet keys live a day at most: a coordinator that died leaves nothing behind for good. */
export const FLEET_KEY_TTL_S = 86_400;
