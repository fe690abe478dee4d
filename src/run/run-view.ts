import type { FaultKind, FaultPhase, UpstreamConfig } from '../upstream/config.js';
import type { ToolFaultKind } from '../upstream/tool-config.js';
import type { UpstreamStats } from '../upstream/upstream-model.js';
import type { RunSnapshot } from './metrics/result.js';
import type { LayerEngineSnapshot } from './replica-snapshot.js';

/** What a dashboard shows of one running variant at one moment. */
export interface RunView {
  /** The variant's name (`naive`, `engine`, or the scenario's name for a plain run). */
  name: string;
  /** Totals, per-layer figures and the last 60 s of per-second series. */
  snapshot: RunSnapshot;
  /**
   * The engine's state at each layer that runs the engine (throttle, budget, breakers, buckets);
   * a layer run as several replicas has their state merged into one `guard`, and `replicas`.
   */
  engines: Array<{ layer: string } & LayerEngineSnapshot>;
  /** The upstream right now: busy slots and queue depth per model, statuses so far. */
  upstream: UpstreamStats;
  /** True once the run has finished. */
  done: boolean;
  /** Live, with a gateway under test: what this client sent it, and hop 2 behind it so far. */
  hops?: HopView;
  /** Each tool's breaker state (`closed`, `half_open`, `open`) where an engine guards its calls. */
  toolBreakers?: Record<string, string>;
}

/** Hop 2 of a live run with a gateway under test, as far as it went (`--upstream`). */
export interface HopView {
  /** Requests this client sent the gateway: hop 1's attempts. */
  sent: number;
  /** Model requests that reached the upstream behind it. */
  reached: number;
  /** Their answers as the upstream sent them (`inFlight` for those still open): adds up to `reached`. */
  status: Record<string, number>;
  /** Requests in flight at the upstream, its busy slots and its queue, at the last reading. */
  inFlight: number;
  busy: number;
  queued: number;
  /** After the driver stopped, while hop 2 settles: how long it has waited, how long the upstream has been quiet, and the limits. */
  settling?: { waitedMs: number; quietForMs: number; quietMs: number; timeoutMs: number };
}

/** Everything one dashboard frame renders: the run's identity, clock, faults and variants. */
export interface DashboardModel {
  scenario: string;
  mode: 'sim' | 'live';
  seed: number;
  /** Run time shown (virtual in sim), ms since the start. */
  t: number;
  durationMs: number;
  /** Playback speed in sim (e.g. 10 = ten times real time; Infinity = as fast as it goes). */
  speed: number;
  paused: boolean;
  /** The model upstream's fault phases, then the tool service's (`model` naming the tool). */
  faults: ShownFault[];
  variants: RunView[];
}

/** A fault phase as the dashboard draws it: the model upstream's, or a tool's (`lost`: the effect done, the answer lost). */
export type ShownFault = Omit<FaultPhase, 'kind'> & { kind: FaultKind | ToolFaultKind };

/** Every fault phase of a run, the model upstream's first, then each tool's with the tool's name as `model`. */
export function shownFaults(upstream: Pick<UpstreamConfig, 'faults' | 'tools'>): ShownFault[] {
  const tools = (upstream.tools ?? []).flatMap((t) => t.faults.map((f): ShownFault => ({ ...f, model: t.name })));
  return tools.length === 0 ? upstream.faults : [...upstream.faults, ...tools];
}
