import { SeededRandom } from '../../engine/random.js';
import { createFakeUpstream, type FakeUpstream } from '../../fake-upstream/server.js';
import { LiveRun } from '../../run/live/live-run.js';
import { SecondHop } from '../../run/live/second-hop.js';
import type { SettleOptions } from '../../run/live/settle-defaults.js';
import type { UpstreamHop } from '../../run/metrics/result.js';
import { runSpecOf } from '../../run/run-spec.js';
import { formatDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io, StopCause } from '../io.js';
import type { Steppable } from '../playback.js';
import { liveIdempotency, type LiveIdempotency } from './live-idempotency.js';

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
export interface LiveVariant {
  name: string;
  scenario: Scenario;
  sim: LiveRun;
  fake?: FakeUpstream;
  /** With --upstream: hop 2, behind the gateway, and its figures once read. */
  hop2?: SecondHop;
  hop?: UpstreamHop;
  wallMs: number;
  /** Its run is over, and so is hop 2 (settled, read, the upstream's settings put back). */
  over: boolean;
}

/**
 * Runs the variants live, one after the other (each against a fresh fake upstream unless
 * --target): they share the machine, so running them side by side would skew both. With
 * --upstream each variant's hop 2 settles before it is read and before the next variant
 * begins (the gateway's late retries belong to the variant that caused them).
 *
 * `stop(cause)` ends the variant in progress and starts no other. A first SIGINT (q, Ctrl-C)
 * still lets hop 2 settle, so its figures stay whole; a second, a SIGTERM or a closed output
 * pipe reads it at once. Either way the upstream's own settings are put back. `done` settles
 * when the last variant is over.
 */
export class LiveSession {
  readonly variants: LiveVariant[];
  readonly done: Promise<void>;
  /** What went wrong, if a run failed (it stops the session; the dashboard then ends). */
  error: unknown = undefined;
  private stopped = false;
  private settling = false;
  /** Aborted at the first stop (a run not begun need not wait for the upstream to be idle), and at a hard one. */
  private readonly halt = new AbortController();
  private readonly skip = new AbortController();

  constructor(
    private readonly io: Io,
    runs: Array<{ name: string; scenario: Scenario }>,
    private readonly settings: LiveSettings,
  ) {
    this.variants = runs.map((r) => ({
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
    }));
    this.done = this.runAll();
  }

  /** What the dashboard plays: each variant's run, done only once its hop 2 is read too. */
  steps(): Array<{ name: string; sim: Steppable }> {
    return this.variants.map((v) => ({
      name: v.name,
      sim: {
        get now() {
          return v.sim.now;
        },
        get done() {
          return v.over;
        },
        // Done once hop 2 is read too: until then the dashboard shows it settling.
        view: (name: string) => ({ ...v.sim.view(name), done: v.over }),
      },
    }));
  }

  stop(cause: StopCause): void {
    const again = this.stopped;
    this.stopped = true;
    for (const v of this.variants) v.sim.stop();
    this.halt.abort();
    if (again || cause !== 'SIGINT' || this.settling) this.skip.abort();
  }

  /** Stopped before everything was measured: a variant not run, cut short, or read before hop 2 settled. */
  get interrupted(): boolean {
    return (
      this.stopped &&
      this.variants.some((v) => !v.sim.started || v.sim.interrupted || v.hop?.settle.outcome === 'skipped')
    );
  }

  /** Puts every upstream behind the gateway back as it was (a crash's last act). */
  restore(): Promise<unknown> {
    return Promise.all(this.variants.map((v) => v.hop2?.restore()));
  }

  private async runAll(): Promise<void> {
    for (const v of this.variants) {
      if (this.stopped) break;
      const start = this.io.wallNow();
      try {
        await this.runOne(v);
      } catch (err) {
        this.error ??= err;
        this.stop('SIGINT');
      } finally {
        v.wallMs = this.io.wallNow() - start;
      }
    }
  }

  private async runOne(v: LiveVariant): Promise<void> {
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
      if (v.hop2 !== undefined) await this.finishHop(v, v.hop2);
      v.over = true;
    }
  }

  /** Waits for hop 2 to settle (unless skipped), reads it, and puts the upstream's settings back. */
  private async finishHop(v: LiveVariant, hop2: SecondHop): Promise<void> {
    this.settling = true;
    const { quietMs, timeoutMs } = hop2.options;
    if (this.stopped && !this.skip.signal.aborted && v.sim.started)
      this.io.stderr(
        `stopping: hop 2 is read once ${hop2.url} has had nothing in flight for ${formatDuration(quietMs)} (at most ${formatDuration(timeoutMs)}); Ctrl-C reads it now\n`,
      );
    try {
      const leafCalls = v.sim.result().layers.at(-1)?.logicalCalls ?? 0;
      const end = await hop2.finish(v.sim.sent(), leafCalls, this.skip.signal);
      v.hop = end.hop;
      if (end.restoreProblem !== undefined)
        this.io.stderr(`note: --upstream: its own fault phases could not be put back: ${end.restoreProblem}\n`);
    } finally {
      this.settling = false;
    }
  }
}
