import { SeededRandom } from '../../engine/random.js';
import { createFakeUpstream, type FakeUpstream } from '../../fake-upstream/server.js';
import { progressLine } from '../../report/progress-line.js';
import { TargetRefusedError, UpstreamControlError } from '../../run/live/live-errors.js';
import { LiveRun } from '../../run/live/live-run.js';
import { UpstreamControl } from '../../run/live/upstream-control.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult, type UpstreamHop } from '../../run/metrics/result.js';
import { formatDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import { UsageError, type Io, type StopCause } from '../io.js';
import { partialIf, type Executed } from './executed.js';
import { Playback } from '../playback.js';
import { runSpecOf } from '../../run/run-spec.js';
import { liveIdempotency, type LiveIdempotency } from './live-idempotency.js';

/** What `--mode live` adds to a run's flags. */
export interface LiveFlags {
  /** Base URL of an OpenAI-compatible endpoint; without it a fake upstream runs in-process. */
  target?: string;
  /** `Name: value`, repeatable. */
  header?: string[];
  connections?: string;
  /** The `stormlab serve` behind the --target gateway: faults go in there, its counters are read. */
  upstream?: string;
}

/** The live settings of a run, checked: one clear line for anything wrong. */
export interface LiveSettings {
  target: string | undefined;
  headers: Record<string, string>;
  connections: number | undefined;
  upstream: string | undefined;
}

/** Checks `--target`, `--header` and `--connections`. */
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
  return { target: flags.target, headers, connections, upstream: flags.upstream };
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

/** One variant of a live run, with the fake upstream it runs against (when no --target) and its wall time. */
interface LiveVariant {
  name: string;
  scenario: Scenario;
  sim: LiveRun;
  fake?: FakeUpstream;
  /** With --upstream: the upstream behind the gateway, and the second hop measured there. */
  control?: UpstreamControl;
  hop?: UpstreamHop;
  wallMs: number;
}

/**
 * Runs the variants live, one after the other (each against a fresh fake upstream unless
 * --target): they share the machine, so running them side by side would skew both. `stop()`
 * ends the one in progress and starts no other; `done` settles when the last is over.
 */
class LiveSession {
  readonly variants: LiveVariant[];
  readonly done: Promise<void>;
  private stopped = false;

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
    }));
    this.done = this.runAll();
  }

  stop(): void {
    this.stopped = true;
    for (const v of this.variants) v.sim.stop();
  }

  /** What went wrong, if a run failed (it stops the session; the dashboard then ends). */
  error: unknown = undefined;

  private async runAll(): Promise<void> {
    for (const v of this.variants) {
      if (this.stopped) break;
      const start = this.io.wallNow();
      try {
        await this.runOne(v);
      } catch (err) {
        this.error ??= err;
        this.stop();
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
        const models = v.scenario.upstream.models.map((m) => m.name);
        v.control = await UpstreamControl.connect(this.settings.upstream, models);
        await v.control.begin(v.scenario.upstream.faults);
      }
      idempotency = await liveIdempotency(this.io, v.scenario, v.name);
      const keys = idempotency === undefined ? {} : { idempotencyStore: idempotency.store };
      if (this.stopped) return;
      const fake = v.fake;
      const control = v.control;
      if (fake !== undefined)
        await v.sim.start({ url: fake.url, stats: () => fake.stats(), toolStats: () => fake.toolStats(), ...keys });
      else if (control !== undefined)
        await v.sim.start({ url: target!, stats: () => control.view(), reached: () => control.reached(), ...keys });
      else await v.sim.start({ url: target!, ...keys });
    } finally {
      await v.sim.close();
      idempotency?.close();
      await v.fake?.close();
      if (v.control !== undefined) {
        try {
          await v.control.end();
        } catch (err) {
          // The run is measured; only putting the upstream's own faults back failed.
          this.io.stderr(`note: --upstream ${err instanceof Error ? err.message : String(err)}\n`);
        }
        v.hop = v.control.hop(v.sim.sent());
      }
    }
  }
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
  flags: LiveFlags & { ui?: boolean; quiet?: boolean },
): Promise<Executed> {
  const settings = liveSettings(flags);
  if (settings.target !== undefined && settings.upstream === undefined && scenario.upstream.faults.length > 0) {
    io.stderr(
      `note: the scenario's fault phases are not injected into ${settings.target}; give --upstream (the stormlab serve behind it) to inject them there\n`,
    );
  }
  const session = new LiveSession(io, runs, settings);
  const playback = new Playback(scenario, session.variants, 1);
  let signal: StopCause | undefined;
  const offStop = io.onStop?.((s) => {
    signal = s === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
    playback.stop();
    session.stop();
  });
  try {
    if (io.terminal !== undefined && flags.ui !== false && io.env.CI !== 'true' && !flags.quiet) {
      const { showDashboard } = await import('../dashboard.js');
      await showDashboard(io, io.terminal, playback, (wallMs) => playback.tick(wallMs));
      if (playback.interrupted) session.stop();
      await session.done;
    } else {
      await plainProgress(io, scenario, session, playback, flags.quiet === true);
    }
  } finally {
    offStop?.();
  }
  if (session.error instanceof TargetRefusedError)
    throw new UsageError(`--target ${settings.target ?? ''}: ${session.error.message}`);
  if (session.error instanceof UpstreamControlError) throw new UsageError(`--upstream ${session.error.message}`);
  if (session.error !== undefined) throw session.error;
  const stopped = playback.interrupted || session.variants.some((v) => v.sim.interrupted);
  if (stopped) {
    io.stderr(
      `stopped at ${formatDuration(Math.round(playback.now))} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
    );
  }
  reportRequestErrors(io, session.variants);
  return partialIf(
    collectLive(scenario, session.variants),
    stopped ? (signal ?? 'SIGINT') : undefined,
    Math.round(playback.now),
  );
}

async function plainProgress(
  io: Io,
  scenario: Scenario,
  session: LiveSession,
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
    const total = [...errors.values()].reduce((a, b) => a + b, 0);
    const codes = [...errors]
      .sort((a, b) => b[1] - a[1])
      .map(([code, n]) => `${code} ×${n}`)
      .join(', ');
    io.stderr(`${v.name}: ${total} request${total === 1 ? '' : 's'} got no HTTP answer (${codes})\n`);
  }
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
