import { SeededRandom } from '../../engine/random.js';
import { createFakeUpstream, type FakeUpstream } from '../../fake-upstream/server.js';
import { LiveRun } from '../../run/live/live-run.js';
import { SecondHop } from '../../run/live/second-hop.js';
import type { SettleOptions } from '../../run/live/settle-defaults.js';
import { runSpecOf } from '../../run/run-spec.js';
import type { RunView } from '../../run/run-view.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io } from '../io.js';
import { liveIdempotency, type LiveIdempotency } from './live-idempotency.js';
import { type SessionVariant, VariantSession } from './variant-session.js';

/** The live settings of a run, checked: one clear line for anything wrong. */
export interface LiveSettings {
  target: string | undefined;
  headers: Record<string, string>;
  connections: number | undefined;
  upstream: string | undefined;
  /** With `upstream`: when hop 2 is read (`--settle-quiet`, `--settle-timeout`). */
  settle: SettleOptions;
}

/** One variant of a live run, with the fake upstream it runs against (when no --target) and its wall time. */
export interface LiveVariant extends SessionVariant {
  sim: LiveRun;
  fake?: FakeUpstream;
  wallMs: number;
}

/**
 * Runs the variants live, one after the other (each against a fresh fake upstream unless
 * --target): they share the machine, so running them side by side would skew both. With
 * --upstream each variant's hop 2 settles before it is read and before the next variant
 * begins (the gateway's late retries belong to the variant that caused them). Stops as
 * `VariantSession` says.
 */
export class LiveSession extends VariantSession<LiveVariant> {
  readonly done: Promise<void>;
  /** Aborted at the first stop: a run not begun need not wait for the upstream to be idle. */
  private readonly halt = new AbortController();

  constructor(
    io: Io,
    runs: Array<{ name: string; scenario: Scenario }>,
    private readonly settings: LiveSettings,
  ) {
    super(
      io,
      runs.map((r) => ({
        name: r.name,
        scenario: r.scenario,
        sim: new LiveRun(runSpecOf(r.scenario, r.name), {
          connections: settings.connections ?? r.scenario.live.connections,
          headers: settings.headers,
          api: r.scenario.live.api,
          stream: r.scenario.live.stream,
        }),
        wallMs: 0,
        over: false,
      })),
    );
    this.done = this.runAll();
  }

  protected clock(v: LiveVariant): number {
    return v.sim.now;
  }

  protected show(v: LiveVariant, name: string): RunView {
    return v.sim.view(name);
  }

  protected stopRuns(): void {
    for (const v of this.variants) v.sim.stop();
    this.halt.abort();
  }

  /** Stopped before everything was measured: a variant not run, cut short, or read before hop 2 settled. */
  get interrupted(): boolean {
    return (
      this.stopped &&
      this.variants.some((v) => !v.sim.started || v.sim.interrupted || v.hop?.settle.outcome === 'skipped')
    );
  }

  protected async runOne(v: LiveVariant): Promise<void> {
    const start = this.io.wallNow();
    try {
      await this.drive(v);
    } finally {
      v.wallMs = this.io.wallNow() - start;
    }
  }

  private async drive(v: LiveVariant): Promise<void> {
    const target = this.settings.target;
    let idempotency: LiveIdempotency | undefined;
    try {
      if (target === undefined) {
        // The model's draws from the simulator's seed split: the same fault draws, give or take timing.
        const random = new SeededRandom(v.scenario.seed).split('upstream');
        v.fake = await createFakeUpstream({ upstream: v.scenario.upstream, port: 0, random });
      }
      if (this.settings.upstream !== undefined) {
        v.hop2 = await SecondHop.open(this.settings.upstream, this.settings.settle);
        await v.hop2.begin(v.scenario.upstream.faults, this.halt.signal);
      }
      idempotency = await liveIdempotency(this.io, v.scenario, v.name);
      const keys = idempotency === undefined ? {} : { idempotencyStore: idempotency.store };
      if (this.stopped) return;
      const { fake, hop2 } = v;
      if (fake !== undefined)
        await v.sim.start({ url: fake.url, stats: () => fake.stats(), toolStats: () => fake.toolStats(), ...keys });
      else if (hop2 !== undefined) await v.sim.start({ url: target!, hop: (sent) => hop2.view(sent), ...keys });
      else await v.sim.start({ url: target!, ...keys });
    } catch (err) {
      this.skip.abort(); // a run that failed is not reported: its hop 2 need not settle
      throw err;
    } finally {
      await v.sim.close();
      idempotency?.close();
      await v.fake?.close();
      if (v.hop2 !== undefined)
        await this.finishHop(v, v.hop2, {
          started: v.sim.started,
          sent: v.sim.sent(),
          leafCalls: v.sim.result().layers.at(-1)?.logicalCalls ?? 0,
        });
    }
  }
}
