import { request } from 'undici';
import type { FaultPhase } from '../../upstream/config.js';
import type { ModelStats, UpstreamStats } from '../../upstream/upstream-model.js';
import type { UpstreamHop } from '../metrics/result.js';
import { UpstreamControlError } from './live-errors.js';

/** How often the upstream's counters are read while a run goes (the dashboard's pace). */
const POLL_MS = 1000;
/** A control call that takes longer than this is an upstream that is not answering. */
const CALL_TIMEOUT_MS = 5000;

/** One model's counters as `GET /_stormlab/stats` gives them (only what is read here). */
type ModelCounters = Pick<
  ModelStats,
  'name' | 'busy' | 'queued' | 'attempts' | 'byStatus' | 'byDetail' | 'tokensServed' | 'wastedTokens' | 'cancelled'
>;

/**
 * The upstream behind a gateway under test, driven through its control API (`stormlab serve`):
 * `begin` saves the fault phases it had and installs the scenario's, timed from now (the run's
 * time 0), and notes its counters; while the run goes they are read once a second (`view`,
 * `reached`); `end` reads them a last time and puts its own fault phases back.
 *
 * Counters are differences from `begin`, so the upstream need not be reset and other traffic
 * before the run does not count. Models are matched by name to the scenario's.
 */
export class UpstreamControl {
  private baseline = new Map<string, ModelCounters>();
  private latest: ModelCounters[] = [];
  private saved: unknown[] | undefined = undefined;
  private timer: ReturnType<typeof setInterval> | undefined = undefined;
  private polling: Promise<void> | undefined = undefined;
  /** Reads that failed while the run went (the last good one is kept). */
  pollErrors = 0;

  private constructor(
    readonly url: string,
    private readonly models: readonly string[],
  ) {}

  /** Checks that `url` has a stormlab control API; an `UpstreamControlError` says what is wrong. */
  static async connect(url: string, models: readonly string[]): Promise<UpstreamControl> {
    const c = new UpstreamControl(url.replace(/\/+$/, ''), models);
    c.latest = await c.readStats();
    return c;
  }

  /** Installs `faults` (times from now) after saving the upstream's own, and notes the counters. */
  async begin(faults: readonly FaultPhase[]): Promise<void> {
    const own = (await this.call('GET', '/_stormlab/faults')) as { faults?: unknown };
    this.saved = Array.isArray(own?.faults) ? own.faults : [];
    this.latest = await this.readStats();
    this.baseline = new Map(this.latest.map((m) => [m.name, m]));
    await this.call('PUT', '/_stormlab/faults', {
      faults: faults.map((f) => ({ ...f, toMs: f.toMs === Infinity ? null : f.toMs })),
      relativeTo: 'now',
    });
    this.timer = setInterval(() => {
      this.polling ??= this.readStats()
        .then(
          (s) => void (this.latest = s),
          () => void this.pollErrors++,
        )
        .finally(() => (this.polling = undefined));
    }, POLL_MS);
    this.timer.unref();
  }

  /** Reads the counters a last time and puts the upstream's own fault phases back (times since its start). */
  async end(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
    try {
      this.latest = await this.readStats();
    } catch {
      this.pollErrors++; // the last good reading stands
    }
    if (this.saved !== undefined)
      await this.call('PUT', '/_stormlab/faults', { faults: this.saved, relativeTo: 'start' });
  }

  /** The upstream per scenario model since `begin`: in flight now, and answers, tokens and waste counted since. */
  view(): UpstreamStats {
    return {
      models: this.models.map((name) => {
        const now = this.latest.find((m) => m.name === name);
        const base = this.baseline.get(name);
        return {
          name,
          busy: now?.busy ?? 0,
          queued: now?.queued ?? 0,
          attempts: since(now?.attempts, base?.attempts),
          byStatus: sinceEach(now?.byStatus, base?.byStatus),
          byDetail: sinceEach(now?.byDetail, base?.byDetail),
          tokensServed: since(now?.tokensServed, base?.tokensServed),
          wastedTokens: since(now?.wastedTokens, base?.wastedTokens),
          cancelled: since(now?.cancelled, base?.cancelled),
        };
      }),
    };
  }

  /** Chat requests the upstream received since `begin`, over every model it has (a gateway may rename them). */
  reached(): number {
    let n = 0;
    for (const m of this.latest) n += since(m.attempts, this.baseline.get(m.name)?.attempts);
    return n;
  }

  /** The second hop of the run, given what the harness sent the gateway. */
  hop(sent: number): UpstreamHop {
    const reached = this.reached();
    const status: Record<string, number> = {};
    for (const m of this.latest) {
      const counts = sinceEach(m.byStatus, this.baseline.get(m.name)?.byStatus);
      for (const k in counts) if (counts[k] > 0) status[k] = (status[k] ?? 0) + counts[k];
    }
    return { sent, reached, amplification: sent > 0 ? round(reached / sent) : 0, status };
  }

  private async readStats(): Promise<ModelCounters[]> {
    const body = (await this.call('GET', '/_stormlab/stats')) as { models?: unknown };
    if (!Array.isArray(body?.models))
      throw new UpstreamControlError(
        `${this.url}: GET /_stormlab/stats answered without "models": not a stormlab serve`,
      );
    return (body.models as Array<Partial<ModelCounters>>).map((m) => ({
      name: String(m.name),
      busy: num(m.busy),
      queued: num(m.queued),
      attempts: num(m.attempts),
      byStatus: counts(m.byStatus),
      byDetail: counts(m.byDetail),
      tokensServed: num(m.tokensServed),
      wastedTokens: num(m.wastedTokens),
      cancelled: num(m.cancelled),
    }));
  }

  private async call(method: 'GET' | 'PUT', path: string, body?: unknown): Promise<unknown> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${this.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: CALL_TIMEOUT_MS,
        bodyTimeout: CALL_TIMEOUT_MS,
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code ?? (err as Error).message;
      throw new UpstreamControlError(`${this.url}: ${method} ${path} got no answer (${String(code)})`);
    }
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      throw new UpstreamControlError(
        `${this.url}: ${method} ${path} answered ${res.statusCode}${res.statusCode === 404 ? ' (not a stormlab serve?)' : `: ${text.slice(0, 200)}`}`,
      );
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamControlError(`${this.url}: ${method} ${path} answered something other than JSON`);
    }
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const since = (now: number | undefined, base: number | undefined): number => Math.max(0, (now ?? 0) - (base ?? 0));
const round = (x: number): number => Number(x.toPrecision(6));

function counts(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof v === 'object' && v !== null) for (const [k, n] of Object.entries(v)) out[k] = num(n);
  return out;
}

function sinceEach(now: Record<string, number> | undefined, base: Record<string, number> | undefined) {
  const out: Record<string, number> = {};
  for (const k in now ?? {}) out[k] = since(now?.[k], base?.[k]);
  return out;
}
