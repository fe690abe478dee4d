import { basename } from 'node:path';
import type { FleetCoordinator } from '../../explore/fleet-coordinator.js';
import type { FleetOutcome, FleetRun } from '../../explore/fleet-run.js';
import { sharedStateOf } from '../../explore/fleet-state.js';
import { SecondHop } from '../../run/live/second-hop.js';
import { runSpecOf } from '../../run/run-spec.js';
import type { RunView } from '../../run/run-view.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io } from '../io.js';
import type { LiveSettings } from './live-session.js';
import { type SessionVariant, VariantSession } from './variant-session.js';

/** One variant of a fleet run: its run on the fleet, and what came back. */
export interface FleetVariant extends SessionVariant {
  fleet: FleetRun;
  outcome?: FleetOutcome;
}

/**
 * `LiveSession` for a fleet: the variants one after the other, each split over `workers`
 * `stormlab worker`s (`FleetRun`). Only this process, the coordinator, touches hop 2: it
 * installs the faults just before the agreed start and settles and reads hop 2 after every
 * worker has reported (or was lost), then restores. A first stop tells every worker to stop
 * and still lets hop 2 settle; a second, SIGTERM or SIGPIPE reads it at once.
 */
export class FleetSession extends VariantSession<FleetVariant> {
  readonly done: Promise<void>;

  constructor(
    io: Io,
    coordinator: FleetCoordinator,
    runs: Array<{ name: string; scenario: Scenario }>,
    private readonly settings: LiveSettings & { target: string },
    workers: number,
    waitMs: number,
  ) {
    super(
      io,
      runs.map((r) => {
        const spec = runSpecOf(r.scenario, r.name);
        const fleet = coordinator.variant(
          spec,
          {
            name: r.name,
            scenario: { file: `${basename(r.scenario.name)}.json`, text: JSON.stringify(r.scenario.document) },
            target: settings.target,
            headers: settings.headers,
            connections: settings.connections ?? r.scenario.live.connections,
            sharedState: sharedStateOf(spec).store === 'redis',
            waitMs,
          },
          workers,
        );
        return { name: r.name, scenario: r.scenario, fleet, over: false };
      }),
    );
    this.done = this.runAll();
  }

  protected clock(v: FleetVariant): number {
    return v.fleet.now;
  }

  protected show(v: FleetVariant, name: string): RunView {
    const view = v.fleet.view(name);
    return v.hop2 === undefined ? view : { ...view, hops: v.hop2.view(v.fleet.sent()) };
  }

  protected stopRuns(): void {
    for (const v of this.variants) v.fleet.stop();
  }

  /** The variant in progress waits for its workers or the agreed start (or, all over, none ever started): nothing to show yet. */
  get waiting(): boolean {
    const current = this.variants.find((v) => !v.over);
    return current === undefined ? !this.variants.some((v) => v.fleet.started) : !current.fleet.driving;
  }

  get interrupted(): boolean {
    return this.stopped && this.variants.some((v) => !v.fleet.started || v.fleet.interrupted);
  }

  protected async runOne(v: FleetVariant): Promise<void> {
    try {
      if (this.settings.upstream !== undefined)
        v.hop2 = await SecondHop.open(this.settings.upstream, this.settings.settle);
      const hop2 = v.hop2;
      v.outcome = await v.fleet.drive(async () => {
        if (hop2 !== undefined) await hop2.begin(v.scenario.upstream.faults, this.skip.signal);
      });
    } catch (err) {
      this.skip.abort();
      throw err;
    } finally {
      // After every worker reported (or was lost): hop 2 settles, is read, and the upstream gets its settings back.
      if (v.hop2 !== undefined)
        await this.finishHop(v, v.hop2, {
          started: v.fleet.started,
          sent: v.outcome?.sent ?? 0,
          leafCalls: v.outcome?.result.layers.at(-1)?.logicalCalls ?? 0,
        });
    }
  }
}
