import { request } from 'undici';
import type { FaultPhase } from '../../upstream/config.js';
import type { ModelStats } from '../../upstream/upstream-model.js';
import { UpstreamControlError } from './live-errors.js';

/** A control call that takes longer than this is an upstream that is not answering. */
const CALL_TIMEOUT_MS = 5000;

/** One model's counters as `GET /_stormlab/stats` gives them (only what is read here). */
export type ModelCounters = Pick<
  ModelStats,
  'name' | 'busy' | 'queued' | 'attempts' | 'byStatus' | 'tokensServed' | 'wastedTokens' | 'cancelled'
>;

/** One route's model requests as the upstream sent them (its `routes` rows). */
export interface RouteCounts {
  route: string;
  requests: number;
  inFlight: number;
  status: Record<string, number>;
  noLengthHeader: number;
}

/** One reading of `GET /_stormlab/stats`: what the second hop is read from. */
export interface StatsReading {
  /** The upstream's own clock, ms. */
  nowMs: number;
  /** Model requests received and not closed yet. */
  inFlight: number;
  /** When a model request last arrived or closed (upstream clock), null before the first. */
  lastActivityMs: number | null;
  routes: RouteCounts[];
  models: ModelCounters[];
}

/** What `/_stormlab/output-tokens` holds: how requests without the length header are answered. */
type WithoutHeader = 'max' | number | null;

/**
 * The upstream behind a gateway, through its control API (`stormlab serve`, or a proxy that
 * speaks the same API): its counters, its fault phases and how it answers requests that come
 * without the harness's length header. `install` saves what the upstream had and puts the
 * run's settings in; `restore` puts the saved ones back, at most once however often it is
 * called (a run's end, a signal and a crash may all ask at once), and it never throws.
 */
export class UpstreamControl {
  private saved: { faults: unknown[]; withoutHeader: WithoutHeader | undefined } | undefined = undefined;
  private installing: Promise<void> | undefined = undefined;
  private restoring: Promise<string | undefined> | undefined = undefined;
  /** Whether the upstream takes `/_stormlab/output-tokens` (a proxy in front of a real model cannot). */
  lengthsSettable = false;

  private constructor(readonly url: string) {}

  /** Checks that `url` speaks the control API; an `UpstreamControlError` says what is wrong. */
  static async connect(url: string): Promise<UpstreamControl> {
    const c = new UpstreamControl(url.replace(/\/+$/, ''));
    await c.read();
    return c;
  }

  /**
   * Saves the upstream's fault phases (and its answer length for requests without the header),
   * then installs `faults` timed from now and asks for `max_tokens`-long answers to requests a
   * gateway stripped of the header, as the driver's header asks.
   */
  install(faults: readonly FaultPhase[]): Promise<void> {
    this.installing = this.put(faults);
    return this.installing;
  }

  private async put(faults: readonly FaultPhase[]): Promise<void> {
    const own = (await this.call('GET', '/_stormlab/faults')) as { faults?: unknown };
    const lengths = await this.call('GET', '/_stormlab/output-tokens', undefined, true);
    const withoutHeader =
      lengths === undefined ? undefined : ((lengths as { withoutHeader?: WithoutHeader }).withoutHeader ?? null);
    this.saved = { faults: Array.isArray(own?.faults) ? own.faults : [], withoutHeader };
    this.lengthsSettable = withoutHeader !== undefined;
    await this.call('PUT', '/_stormlab/faults', {
      faults: faults.map((f) => ({ ...f, toMs: f.toMs === Infinity ? null : f.toMs })),
      relativeTo: 'now',
    });
    if (this.lengthsSettable) await this.call('PUT', '/_stormlab/output-tokens', { withoutHeader: 'max' });
  }

  /**
   * Puts back what `install` saved (its fault phases on the upstream's own timeline). Resolves
   * to why that failed, or undefined; the same promise to every caller.
   */
  restore(): Promise<string | undefined> {
    // Asked while installing (a crash, a signal): once the install is over, whatever it got to.
    this.restoring ??= (this.installing ?? Promise.resolve()).then(
      () => this.putBack(),
      () => this.putBack(),
    );
    return this.restoring;
  }

  /** The upstream's counters now. */
  async read(): Promise<StatsReading> {
    const body = (await this.call('GET', '/_stormlab/stats')) as Record<string, unknown> | undefined;
    if (!Array.isArray(body?.routes) || !Array.isArray(body?.models))
      throw new UpstreamControlError(
        `${this.url}: GET /_stormlab/stats answered without "routes" and "models": not a stormlab serve (or one older than this harness)`,
      );
    const last = body.lastActivityMs;
    return {
      nowMs: num(body.nowMs),
      inFlight: num(body.inFlight),
      lastActivityMs: typeof last === 'number' && Number.isFinite(last) ? last : null,
      routes: (body.routes as Array<Partial<RouteCounts>>).map((r) => ({
        route: String(r.route),
        requests: num(r.requests),
        inFlight: num(r.inFlight),
        status: counts(r.status),
        noLengthHeader: num(r.noLengthHeader),
      })),
      models: (body.models as Array<Partial<ModelCounters>>).map((m) => ({
        name: String(m.name),
        busy: num(m.busy),
        queued: num(m.queued),
        attempts: num(m.attempts),
        byStatus: counts(m.byStatus),
        tokensServed: num(m.tokensServed),
        wastedTokens: num(m.wastedTokens),
        cancelled: num(m.cancelled),
      })),
    };
  }

  private async putBack(): Promise<string | undefined> {
    const saved = this.saved;
    if (saved === undefined) return undefined;
    const problems: string[] = [];
    const put = (path: string, body: unknown) =>
      this.call('PUT', path, body).catch((err: unknown) => void problems.push(messageOf(err)));
    await put('/_stormlab/faults', { faults: saved.faults, relativeTo: 'start' });
    if (saved.withoutHeader !== undefined)
      await put('/_stormlab/output-tokens', { withoutHeader: saved.withoutHeader });
    return problems.length === 0 ? undefined : problems.join('; ');
  }

  /** A control call's JSON answer; with `optional`, undefined for a 404 (a route this upstream does not have). */
  private async call(method: 'GET' | 'PUT', path: string, body?: unknown, optional = false): Promise<unknown> {
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
    if (optional && res.statusCode === 404) return undefined;
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
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function counts(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof v === 'object' && v !== null) for (const [k, n] of Object.entries(v)) out[k] = num(n);
  return out;
}
