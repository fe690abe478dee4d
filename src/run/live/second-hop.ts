import type { Clock } from '../../engine/clock.js';
import { preciseClock } from '../../platform/system-clock.js';
import type { FaultPhase } from '../../upstream/config.js';
import type { UpstreamHop } from '../metrics/result.js';
import { ratio, round6 } from '../metrics/round.js';
import type { HopView } from '../run-view.js';
import { hopSince } from './hop-counts.js';
import type { SettleOptions } from './settle-defaults.js';
import { quietFor, settle } from './settle.js';
import { type StatsReading, UpstreamControl } from './upstream-control.js';

/** How often the upstream's counters are read while a run goes (the dashboard's pace). */
const POLL_MS = 1000;

/** How hop 2 ended: its figures (none when it never began), and why the upstream's own settings could not be put back. */
export interface HopEnd {
  hop: UpstreamHop | undefined;
  restoreProblem: string | undefined;
}

/**
 * Hop 2 of a live run with a gateway under test, from the first request to the last answer:
 * the one place that installs a run's fault phases in the upstream behind the gateway, reads
 * what reaches it, waits for it to settle, and puts the upstream's own settings back. A run
 * driven from one process and a fleet's coordinator both use it around their driving.
 *
 * `begin` waits for the upstream to have nothing in flight (another run's retries would count
 * in this one's), installs the faults and notes the counters; while the run goes they are read
 * once a second (`view`); `finish` waits for hop 2 to settle (`SettleOptions`), reads it a last
 * time and restores. `restore` is safe at any moment and from anywhere (a signal, a crash).
 */
export class SecondHop {
  private base: StatsReading | undefined = undefined;
  private latest: StatsReading | undefined = undefined;
  private timer: ReturnType<typeof setInterval> | undefined = undefined;
  private polling: Promise<void> | undefined = undefined;
  private settling: HopView['settling'] = undefined;

  private constructor(
    readonly control: UpstreamControl,
    readonly options: SettleOptions,
    private readonly clock: Clock,
  ) {}

  /** Connects to the control API at `url` (an `UpstreamControlError` says what is wrong). */
  static async open(url: string, options: SettleOptions, clock: Clock = preciseClock): Promise<SecondHop> {
    return new SecondHop(await UpstreamControl.connect(url), options, clock);
  }

  get url(): string {
    return this.control.url;
  }

  /**
   * Once the upstream has nothing in flight (at most `timeoutMs`): installs `faults`, timed
   * from now, and notes the counters — unless `stop` aborted meanwhile.
   */
  async begin(faults: readonly FaultPhase[], stop?: AbortSignal): Promise<void> {
    await settle(() => this.control.read(), { quietMs: 0, timeoutMs: this.options.timeoutMs }, this.clock, stop);
    if (stop?.aborted) return; // stopped before it began: nothing installed, nothing to read
    await this.control.install(faults);
    this.base = await this.control.read();
    this.latest = this.base;
    this.timer = setInterval(() => {
      this.polling ??= this.control
        .read()
        .then(
          (s) => void (this.latest = s),
          () => {}, // the last good reading stands; `finish` reads again
        )
        .finally(() => (this.polling = undefined));
    }, POLL_MS);
    this.timer.unref();
  }

  /** Hop 2 so far, given what the driver has sent the gateway. */
  view(sent: number): HopView {
    const now = this.latest;
    const base = this.base;
    const counts = now !== undefined && base !== undefined ? hopSince(base, now) : undefined;
    const view: HopView = {
      sent,
      reached: counts?.reached ?? 0,
      status: counts?.status ?? {},
      inFlight: counts?.inFlight ?? 0,
      busy: now?.models.reduce((n, m) => n + m.busy, 0) ?? 0,
      queued: now?.models.reduce((n, m) => n + m.queued, 0) ?? 0,
    };
    if (this.settling !== undefined) view.settling = this.settling;
    return view;
  }

  /**
   * After the driver stopped: waits for hop 2 to settle (or `skip` to abort), puts the
   * upstream's own settings back, and gives hop 2's figures — `sent` requests from the driver,
   * `leafCalls` logical leaf calls for the total.
   */
  async finish(sent: number, leafCalls: number, skip?: AbortSignal): Promise<HopEnd> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
    const base = this.base;
    if (base === undefined) return { hop: undefined, restoreProblem: await this.restore() };
    let atEnd: number | undefined;
    const { quietMs, timeoutMs } = this.options;
    const waited = await settle(
      () => this.control.read(),
      this.options,
      this.clock,
      skip,
      (reading, waitedMs) => {
        this.latest = reading;
        atEnd ??= hopSince(base, reading).reached;
        this.settling = { waitedMs, quietForMs: quietFor(reading), quietMs, timeoutMs };
      },
    );
    const restoreProblem = await this.restore();
    const c = hopSince(base, this.latest ?? base);
    const hop: UpstreamHop = {
      sent,
      reached: c.reached,
      amplification: round6(ratio(c.reached, sent)),
      totalAmplification: round6(ratio(c.reached, leafCalls)),
      status: c.status,
      routes: c.routes,
      tokensServed: c.tokensServed,
      wastedTokens: c.wastedTokens,
      noLengthHeader: c.noLengthHeader,
      lengthsAsAsked: this.control.lengthsSettable,
      settle: {
        settled: waited.outcome === 'quiet',
        outcome: waited.outcome,
        quietMs,
        timeoutMs,
        waitedMs: Math.round(waited.waitedMs),
        inFlight: c.inFlight,
        afterEnd: Math.max(0, c.reached - (atEnd ?? c.reached)),
      },
    };
    return { hop, restoreProblem };
  }

  /** Puts the upstream's own fault phases (and answer lengths) back; resolves to why that failed, or undefined. */
  restore(): Promise<string | undefined> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    return this.control.restore();
  }
}
