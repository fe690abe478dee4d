import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { IdempotencyStore } from '../../engine/idempotency-store.js';
import { parseRetryAfter } from '../../engine/retry-after.js';
import { TOOL_DEFAULTS } from '../../upstream/tool-config.js';
import type { ToolTransport } from '../../traffic/tool-observer.js';
import type { ToolListener, ToolServiceStats } from '../../upstream/tool-service.js';

/** Connections of the tool service's pool: tools are called far less often than the model. */
const TOOL_CONNECTIONS = 64;
/** A tool request still open this long after its caller's timeout is aborted (a `hang` or `lost` answer). */
const ABANDON_AFTER_MS = 1000;

/**
 * Tool attempts over real HTTP: each `submit` is a `POST {url}/_stormlab/tools/{name}` with
 * the intent in the body (`{"intent": "…"}`, what the server counts duplicates by) and the
 * idempotency key, when the call has one, in `idempotency-key`. The answer's status and
 * `retry-after-ms` (or `retry-after`) go to the listener. A request that gets no answer (a
 * connection error, a `hang` or `lost` fault) is left for the caller's timeout, and aborted
 * once its caller can no longer want it.
 */
export class HttpToolTransport implements ToolTransport {
  private pool: Pool | undefined;
  private readonly inFlight = new Set<AbortController>();
  /** Per tool: calls the store answered itself, with a key in progress (conflicts) or its receipt (replays). */
  private readonly conflicts: number[];
  private readonly replays: number[];

  constructor(
    private readonly names: readonly string[],
    /** Per tool (by index), how long its calls wait for an answer at most. */
    private readonly timeoutsMs: readonly number[],
    private readonly listener: ToolListener,
    private readonly now: () => number,
  ) {
    this.conflicts = names.map(() => 0);
    this.replays = names.map(() => 0);
  }

  /**
   * The tool service's figures with what this process's idempotency store answered without a
   * request (`idempotency: redis`): those conflicts and replays never reach the service.
   */
  withLocal(service: readonly ToolServiceStats[]): ToolServiceStats[] {
    return service.map((s) => {
      const i = this.names.indexOf(s.name);
      if (i < 0 || this.conflicts[i] + this.replays[i] === 0) return s;
      return { ...s, conflicts: s.conflicts + this.conflicts[i], replays: s.replays + this.replays[i] };
    });
  }

  /**
   * The engine's idempotency store for keyed calls (`idempotency: redis`): the key is taken
   * here, before the request (`in_progress` before the effect), so it holds across every
   * process sharing the store. Without it the key goes to the tool service in a header.
   */
  private store: IdempotencyStore | undefined = undefined;

  /** This process's owner name for the keys it takes. */
  private readonly owner = `live-${randomUUID()}`;
  private ownerSerial = 0;

  toolIndex(name: string): number {
    return this.names.indexOf(name);
  }

  /** Starts sending to `url` (the fake upstream's base URL), keys taken in `store` when given. */
  open(url: string, store?: IdempotencyStore): void {
    this.store = store;
    const u = new URL(url);
    this.base = u.pathname.replace(/\/$/, '');
    this.pool = new Pool(u.origin, { connections: TOOL_CONNECTIONS });
  }

  private base = '';

  submit(reqId: number, serial: number, tool: number, intent: number, key: string, now: number): void {
    if (key === '' || this.store === undefined) return this.send(reqId, serial, tool, intent, key, now);
    const store = this.store;
    const owner = `${this.owner}:${++this.ownerSerial}`;
    const answer = (status: number, retryAfterMs = -1) =>
      this.listener.onToolResponse(reqId, serial, status, retryAfterMs, this.now());
    store.begin(key, owner, TOOL_DEFAULTS.leaseMs, Date.now()).then(
      (r) => {
        if (r.outcome === 'acquired') return this.send(reqId, serial, tool, intent, '', now, { store, key, owner });
        if (r.outcome === 'succeeded') {
          this.replays[tool]++;
          return answer(200); // the receipt: the effect is not done again
        }
        if (r.outcome === 'in_progress') {
          this.conflicts[tool]++;
          return answer(
            409,
            Math.min(TOOL_DEFAULTS.conflictRetryAfterMs, Math.max(0, r.record.leaseUntil - Date.now())),
          );
        }
        answer(422);
      },
      // Fails closed: a key the store cannot vouch for is not sent (the effect might be done twice).
      () => answer(503),
    );
  }

  private send(
    reqId: number,
    serial: number,
    tool: number,
    intent: number,
    key: string,
    _now: number,
    held?: { store: IdempotencyStore; key: string; owner: string },
  ): void {
    const pool = this.pool;
    if (pool === undefined) throw new Error('the tool transport is not open');
    const ac = new AbortController();
    this.inFlight.add(ac);
    const limit = this.timeoutsMs[tool];
    const timer = Number.isFinite(limit) ? setTimeout(() => ac.abort(), limit + ABANDON_AFTER_MS) : undefined;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key !== '') headers['idempotency-key'] = key;
    pool
      .request({
        method: 'POST',
        path: `${this.base}/_stormlab/tools/${encodeURIComponent(this.names[tool])}`,
        headers,
        body: JSON.stringify(intent < 0 ? {} : { intent: String(intent) }),
        signal: ac.signal,
      })
      .then(async (res) => {
        await res.body.dump();
        const h = res.headers;
        const first = (name: string) => {
          const v = h[name];
          return Array.isArray(v) ? v[0] : v;
        };
        const retryAfter = parseRetryAfter(
          { 'retry-after-ms': first('retry-after-ms'), 'retry-after': first('retry-after') },
          Date.now(),
        );
        if (held !== undefined) {
          // The receipt after the effect; an answer without one frees the key for a retry.
          // No answer at all keeps it in progress until its lease ends: the effect may be done.
          const at = Date.now();
          await (res.statusCode === 200
            ? held.store.succeed(held.key, held.owner, { status: 200 }, at)
            : held.store.fail(held.key, held.owner, { error: `status ${res.statusCode}`, retryable: true }, at)
          ).catch(() => false);
        }
        this.listener.onToolResponse(reqId, serial, res.statusCode, retryAfter ?? -1, this.now());
      })
      .catch(() => {
        // Aborted or no answer: the caller's timeout ends the attempt.
      })
      .finally(() => {
        if (timer !== undefined) clearTimeout(timer);
        this.inFlight.delete(ac);
      });
  }

  /** Aborts every request in flight (the run is over). */
  abortAll(): void {
    for (const ac of this.inFlight) ac.abort();
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.abortAll();
    await this.pool?.close();
    this.pool = undefined;
  }
}
