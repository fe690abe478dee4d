import { OptionError } from '../engine/errors.js';
import { IdempotencyTable } from '../engine/idempotency-table.js';
import type { SeededRandom } from '../engine/random.js';
import { TokenBucket } from '../engine/token-bucket.js';
import type { FaultPhase } from './config.js';
import { sampler } from './distribution.js';
import { FaultCode, FaultTimeline } from './fault-timeline.js';
import type { EventHandler, Scheduler } from './scheduler.js';
import { TOOL_DEFAULTS, type ToolConfig } from './tool-config.js';
import { NETWORK_MS } from './upstream-model.js';

/** What the tool service answers: an HTTP status, with a retry-after hint in ms (-1 = none). */
export interface ToolListener {
  /** The answer to attempt `serial` of the caller's request `reqId`. */
  onToolResponse(reqId: number, serial: number, status: number, retryAfterMs: number, now: number): void;
}

/** One tool's counters. Executions count effects done, whatever became of the answer. */
export interface ToolServiceStats {
  name: string;
  requests: number;
  /** Answers by status (`"200"`, `"409"`, `"429"`, `"503"`), plus `"hang"` and `"lost"` for those that never came. */
  status: Record<string, number>;
  /** Times the tool's effect was done. */
  executions: number;
  /** Distinct intents whose effect was done at least once (side-effect requests only). */
  intents: number;
  /** Executions beyond the first of their intent. */
  duplicates: number;
  /** Keyed requests that found their key `in_progress` (answered 409). */
  conflicts: number;
  /** Keyed requests that found their key done and got the receipt back, with no second effect. */
  replays: number;
  busy: number;
  queued: number;
}

const K_ANSWER = 1;
const K_DONE = 2;

/** A request at the service: plain fields, jobs reused through a free list. */
interface Job {
  reqId: number;
  serial: number;
  tool: number;
  /** The effect's intent for counting (side effects), -1 for none. */
  intent: number;
  /** The idempotency key the request carries, '' for none. */
  key: string;
  owner: string;
  status: number;
  retryAfterMs: number;
  /** A `lost` fault hit it: the effect is done, the answer never sent. */
  lost: boolean;
}

class ToolState {
  readonly latency: () => number;
  readonly bucket: TokenBucket | null;
  readonly waiting: number[] = [];
  head = 0;
  busy = 0;
  readonly stats: ToolServiceStats;
  /** Executions per intent. */
  readonly done = new Map<number, number>();

  constructor(
    readonly cfg: ToolConfig,
    random: SeededRandom,
  ) {
    this.latency = sampler(cfg.latencyMs, random);
    this.bucket =
      cfg.rps === undefined ? null : new TokenBucket({ capacity: cfg.rps, refillPerSec: cfg.rps }, `${cfg.name}.rps`);
    this.stats = {
      name: cfg.name,
      requests: 0,
      status: {},
      executions: 0,
      intents: 0,
      duplicates: 0,
      conflicts: 0,
      replays: 0,
      busy: 0,
      queued: 0,
    };
  }

  get queued(): number {
    return this.waiting.length - this.head;
  }
}

/**
 * The simulated tool service beside the LLM upstream: per tool, `slots` requests served at
 * once behind a bounded queue (503 past it), a service time drawn from `latencyMs`, a
 * requests-per-second limit (429 with a retry-after), and fault phases of its own.
 *
 * A tool does not know its caller left: a request the caller timed out on is still served,
 * and its effect still happens — which is what turns a slow tool and a retry into a duplicate.
 * A request that carries an idempotency key runs the engine's idempotency state machine at
 * the service, as an API with `Idempotency-Key` does: `in_progress` is written when the
 * request is accepted (before the effect), the receipt when the effect is done; a request for
 * a key in progress is answered 409 (an idempotency conflict, retry after about a service
 * time), one for a key done gets the receipt (200) without a second effect.
 */
export class ToolService implements EventHandler {
  private readonly tools: ToolState[];
  private readonly faults: FaultTimeline[];
  private readonly lostPhase: boolean[][];
  private readonly handlerId: number;
  private readonly table = new IdempotencyTable();
  private readonly jobs: Job[] = [];
  private readonly free: number[] = [];
  private owners = 0;

  constructor(
    configs: readonly ToolConfig[],
    private readonly scheduler: Scheduler,
    random: SeededRandom,
    private readonly listener: ToolListener,
  ) {
    const names = configs.map((t) => t.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw new OptionError(`tools names must be unique, got ${JSON.stringify(dup)} twice`);
    this.tools = configs.map((t) => new ToolState(t, random.split(`tool:${t.name}`)));
    // A `lost` phase is a `hang` to the timeline (the caller never hears back), flagged so
    // that the effect still happens.
    this.faults = configs.map(
      (t) =>
        new FaultTimeline(
          t.faults.map((f): FaultPhase => ({ ...f, kind: f.kind === 'lost' ? 'hang' : f.kind })),
          [t.name],
          random.split(`tool-faults:${t.name}`),
        ),
    );
    this.lostPhase = configs.map((t) => t.faults.map((f) => f.kind === 'lost'));
    this.handlerId = scheduler.register(this);
  }

  /** The index of tool `name`, -1 if unknown. */
  toolIndex(name: string): number {
    return this.tools.findIndex((t) => t.cfg.name === name);
  }

  /** Every tool's counters now. */
  stats(): ToolServiceStats[] {
    return this.tools.map((t) => ({ ...t.stats, status: { ...t.stats.status }, busy: t.busy, queued: t.queued }));
  }

  /**
   * A request arrives now. `intent` identifies the effect's business intent (−1 when the tool
   * has no side effect to count); `key` is the idempotency key it carries ('' for none).
   */
  submit(reqId: number, serial: number, tool: number, intent: number, key: string, now: number): void {
    const t = this.tools[tool];
    if (t === undefined) throw new RangeError(`unknown tool index ${tool}`);
    t.stats.requests++;
    const j = this.job(reqId, serial, tool, intent, key);
    const phase = this.faults[tool].arrival(0, now);
    if (phase >= 0) {
      const kind = this.faults[tool].kind(phase);
      if (kind === FaultCode.Errors || kind === FaultCode.Outage)
        return this.answer(j, this.faults[tool].status(phase), -1, now);
      if (!this.lostPhase[tool][phase]) {
        count(t.stats.status, 'hang');
        return this.release(j);
      }
      this.jobs[j].lost = true;
    }
    if (t.bucket !== null) {
      const wait = t.bucket.waitMs(1, now);
      if (wait !== 0) return this.answer(j, 429, wait === Infinity ? -1 : Math.ceil(wait), now);
      t.bucket.tryTake(1, now);
    }
    if (t.busy >= t.cfg.slots && t.queued >= t.cfg.queue) return this.answer(j, 503, -1, now);
    if (key !== '' && !this.begin(j, t, now)) return;
    if (t.busy < t.cfg.slots) return this.start(j, t, now);
    t.waiting.push(j);
  }

  handle(kind: number, j: number, now: number): void {
    const job = this.jobs[j];
    if (kind === K_ANSWER) {
      this.listener.onToolResponse(job.reqId, job.serial, job.status, job.retryAfterMs, now);
      return this.release(j);
    }
    // K_DONE: the effect happens now, then the answer goes back (unless it is lost).
    const t = this.tools[job.tool];
    t.busy--;
    this.execute(t, job.intent);
    if (job.key !== '') this.table.succeed(job.key, job.owner, { done: now }, now);
    this.next(t, now);
    if (job.lost) {
      count(t.stats.status, 'lost');
      return this.release(j);
    }
    this.answer(j, 200, -1, now);
  }

  /** Takes the job's key; answers it (and returns false) when the key is taken or done. */
  private begin(j: number, t: ToolState, now: number): boolean {
    const job = this.jobs[j];
    job.owner = `o${this.owners++}`;
    const r = this.table.begin(job.key, job.owner, TOOL_DEFAULTS.leaseMs, now);
    if (r.outcome === 'acquired') return true;
    if (r.outcome === 'succeeded') {
      t.stats.replays++;
      this.answer(j, 200, -1, now);
    } else if (r.outcome === 'in_progress') {
      t.stats.conflicts++;
      this.answer(j, 409, Math.min(TOOL_DEFAULTS.conflictRetryAfterMs, Math.max(0, r.record.leaseUntil - now)), now);
    } else this.answer(j, 422, -1, now);
    return false;
  }

  private start(j: number, t: ToolState, now: number): void {
    t.busy++;
    const factor = this.faults[this.jobs[j].tool].latencyFactor(0, now);
    this.scheduler.schedule(now + Math.max(0, t.latency()) * factor, this.handlerId, K_DONE, j);
  }

  private next(t: ToolState, now: number): void {
    if (t.queued === 0) return;
    const j = t.waiting[t.head++];
    if (t.head > 1024 && t.head * 2 > t.waiting.length) {
      t.waiting.splice(0, t.head);
      t.head = 0;
    }
    this.start(j, t, now);
  }

  private execute(t: ToolState, intent: number): void {
    t.stats.executions++;
    if (intent < 0) return;
    const before = t.done.get(intent) ?? 0;
    t.done.set(intent, before + 1);
    if (before === 0) t.stats.intents++;
    else t.stats.duplicates++;
  }

  private answer(j: number, status: number, retryAfterMs: number, now: number): void {
    const job = this.jobs[j];
    job.status = status;
    job.retryAfterMs = retryAfterMs;
    count(this.tools[job.tool].stats.status, String(status));
    this.scheduler.schedule(now + NETWORK_MS, this.handlerId, K_ANSWER, j);
  }

  private job(reqId: number, serial: number, tool: number, intent: number, key: string): number {
    const j = this.free.length > 0 ? this.free.pop()! : this.jobs.push({} as Job) - 1;
    const job = this.jobs[j];
    job.reqId = reqId;
    job.serial = serial;
    job.tool = tool;
    job.intent = intent;
    job.key = key;
    job.owner = '';
    job.status = 0;
    job.retryAfterMs = -1;
    job.lost = false;
    return j;
  }

  private release(j: number): void {
    this.free.push(j);
  }
}

function count(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}
