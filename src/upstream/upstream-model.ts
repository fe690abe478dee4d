import { OptionError } from '../engine/errors.js';
import { checkInteger, checkNonEmptyString, checkNumber, checkOneOf, checkPositive } from '../engine/options.js';
import type { Random } from '../engine/random.js';
import type { ModelConfig, UpstreamConfig } from './config.js';
import { sampler } from './distribution.js';
import { FaultCode, FaultTimeline } from './fault-timeline.js';
import { Quota, type QuotaView } from './quota.js';
import { Detail, DETAIL_NAMES, RequestFlag, StreamEvent, type UpstreamListener } from './response.js';
import type { EventHandler, Scheduler } from './scheduler.js';

/** Network time of an answer given at once (refusals, injected errors): 1 ms. */
export const NETWORK_MS = 1;

/** Defaults for the optional-in-spirit fields of a `ModelConfig`; the scenario schema fills them from here. */
export const MODEL_DEFAULTS = {
  /** @default 529 */
  shedStatus: 529,
  /** @default 0 */
  loadStretch: 0,
  /** @default Infinity */
  contextTokens: Infinity,
};

export interface ModelStats {
  name: string;
  /** Slots serving now (work the upstream does, whether or not its caller still waits). */
  busy: number;
  /** Requests waiting for a slot now. */
  queued: number;
  attempts: number;
  /** Responses delivered, by status ('0' = reset). */
  byStatus: Record<string, number>;
  /** Responses delivered, by `Detail` name. */
  byDetail: Record<string, number>;
  /** Tokens of the responses delivered (prompt + completion processed). */
  tokensServed: number;
  /** Tokens processed for requests whose caller had given up (cancel-on-disconnect off). */
  wastedTokens: number;
  /** Requests the caller cancelled before their answer. */
  cancelled: number;
}

export interface UpstreamStats {
  models: ModelStats[];
}

/** reqIds below this index an array directly (at most 4 MiB); larger ones go through a Map. */
const DIRECT_MAX = 1 << 20;
const ANSWER = 1;
const DONE = 2;
/** Streamed requests: the first token, and the start of a stall (reported through `onStream`). */
const FIRST = 3;
const STALL = 4;
/** Request record states. DROPPED: cancelled with cancel-on-disconnect, waiting to be reclaimed. */
const FREE = 0,
  ANSWERING = 1,
  QUEUED = 2,
  SERVING = 3,
  HANGING = 4,
  DROPPED = 5,
  /** Stalled forever after some tokens: holds its slot until its caller leaves. */
  STALLED = 6;

/** One model's capacity, queue, quotas and counters. */
class ModelState {
  busy = 0;
  /** Live entries in `ring` (dropped ones stay in the ring until dequeued but hold no place). */
  queued = 0;
  ring = new Int32Array(16);
  head = 0;
  len = 0;
  attempts = 0;
  tokensServed = 0;
  wastedTokens = 0;
  cancelled = 0;
  readonly byStatus = new Float64Array(600);
  readonly byDetail = new Float64Array(DETAIL_NAMES.length);
  readonly ttft: () => number;
  readonly tpot: () => number;
  readonly rpm: Quota | null;
  readonly tpm: Quota | null;

  constructor(
    readonly cfg: ModelConfig,
    random: Random,
  ) {
    this.ttft = sampler(cfg.ttftMs, random);
    this.tpot = sampler(cfg.tpotMs, random);
    this.rpm = cfg.rpm === undefined ? null : new Quota(cfg.rpm, 60_000, `${cfg.name}.rpm`);
    this.tpm = cfg.tpm === undefined ? null : new Quota(cfg.tpm, 60_000, `${cfg.name}.tpm`);
  }

  push(r: number): void {
    if (this.len === this.ring.length) {
      const bigger = new Int32Array(this.ring.length * 2);
      for (let i = 0; i < this.len; i++) bigger[i] = this.ring[(this.head + i) & (this.ring.length - 1)];
      this.ring = bigger;
      this.head = 0;
    }
    this.ring[(this.head + this.len) & (this.ring.length - 1)] = r;
    this.len++;
  }

  /** The oldest entry, or -1. */
  shift(): number {
    if (this.len === 0) return -1;
    const r = this.ring[this.head];
    this.head = (this.head + 1) & (this.ring.length - 1);
    this.len--;
    return r;
  }
}

/**
 * The simulated LLM upstream (ARCHITECTURE.md, "The upstream model"): per model, `slots` served at
 * once, a bounded FIFO queue, shedding past it, RPM/TPM quotas, and fault phases.
 *
 * Built for millions of requests per second: every request lives in a record — a row across
 * flat typed arrays, taken from a free list that grows by doubling — and every timed step is
 * a `Scheduler` event naming the record. No promise, closure or object per request; reqId →
 * record (so that `cancel` can find it) is an array for small integer reqIds.
 *
 * Order of checks at arrival (each refusal answered after NETWORK_MS): the fault phase active
 * now → context window (400) → RPM then TPM quota (429 with the exact wait; refusals do not
 * count in the windows, anything that passes does) → a free slot, a queue place, or shed.
 */
export class UpstreamModel implements EventHandler {
  private readonly models: ModelState[];
  private faults: FaultTimeline;
  private readonly handlerId: number;
  private readonly cancelOnDisconnect: boolean;
  /**
   * reqId → record + 1 (0 = none). Small non-negative integer reqIds (a caller's own slot
   * numbers, reused from a free list) index `direct`, which grows by doubling; any other reqId
   * goes through `byId` (a Map costs ~80 ns per set + delete, the array ~2 ns).
   */
  private direct = new Int32Array(1024);
  private readonly byId = new Map<number, number>();
  // Request records.
  private cap = 0;
  private free = new Int32Array(0);
  private freeTop = 0;
  private reqId = new Float64Array(0);
  private model = new Int32Array(0);
  private state = new Uint8Array(0);
  /** The caller gave up: no delivery; the tokens it still burns are wasted. */
  private gaveUp = new Uint8Array(0);
  private prompt = new Float64Array(0);
  private output = new Float64Array(0);
  /** Midstream share of the output done before the break, -1 for none. */
  private share = new Float64Array(0);
  /** `RequestFlag` bits of the request. */
  private flags = new Uint8Array(0);
  /** The stream fault decided at arrival (a `FaultCode`, 0 for none) and its parameters. */
  private sfault = new Uint8Array(0);
  private sAfter = new Float64Array(0);
  private sMs = new Float64Array(0);
  /** A `slow-first-token`'s added time, drawn at arrival, ms. */
  private sAdd = new Float64Array(0);
  /** The route the request came on (a server's; undefined in the simulator), for route-targeted phases. */
  private route: Array<string | undefined> = [];
  /** How long the request waited before it could be submitted (a server's intake), taken off its first token. */
  private lead = new Float64Array(0);
  /** Streamed requests: at the first token, the token time still to come (stalls not counted). */
  private streamLeft = new Float64Array(0);
  // The answer an ANSWERING or SERVING record will give.
  private status = new Int32Array(0);
  private detail = new Int32Array(0);
  private tokens = new Float64Array(0);
  private retry = new Float64Array(0);

  constructor(
    config: UpstreamConfig,
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly listener: UpstreamListener,
  ) {
    const cfgs = config.models.map((m, i) => checkModel({ ...MODEL_DEFAULTS, ...m }, i));
    const names = cfgs.map((m) => m.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined)
      throw new OptionError(`upstream.models names must be unique, got ${JSON.stringify(dup)} twice`);
    this.models = cfgs.map((m) => new ModelState(m, random));
    this.faults = new FaultTimeline(config.faults ?? [], names, random, continuingModels(cfgs));
    this.cancelOnDisconnect = config.cancelOnDisconnect ?? false;
    this.handlerId = scheduler.register(this);
    this.grow();
  }

  /**
   * Reads the fault phases from `timeline` from now on, keeping quotas, busy slots and queue
   * (the fake upstream's `PUT /_stormlab/faults` changes the faults of a running model).
   */
  setFaults(timeline: FaultTimeline): void {
    this.faults = timeline;
  }

  /** The requests-per-minute and tokens-per-minute quotas of model `index`, those it has. */
  quotas(index: number): { requests?: QuotaView; tokens?: QuotaView } {
    const m = this.models[index];
    const out: { requests?: QuotaView; tokens?: QuotaView } = {};
    if (m.rpm !== null) out.requests = m.rpm;
    if (m.tpm !== null) out.tokens = m.tpm;
    return out;
  }

  /** Whether model `index` continues a prefilled answer (`continuation: prefill`). */
  continues(index: number): boolean {
    return this.models[index]?.cfg.continuation === 'prefill';
  }

  /** The index of model `name`, -1 if unknown. */
  modelIndex(name: string): number {
    for (let i = 0; i < this.models.length; i++) if (this.models[i].cfg.name === name) return i;
    return -1;
  }

  /**
   * A request arrives now. `reqId` is the caller's number, unique among its requests in flight;
   * `flags` are `RequestFlag` bits (a streamed request is told its first token and stalls).
   * The answer runs `outputTokens` (`maxOutputTokens` unless told: the simulator's requests run
   * to their limit; the fake upstream's answers their natural length, all of OpenAI's `n`
   * choices together); the context window and the tokens-per-minute quota count the limit, as
   * providers reserve it. `leadMs`: how long the request had already waited when it was
   * submitted (an HTTP server busy taking in a burst), taken off its first token (its answer,
   * unstreamed), never below now: a time to first token counts from the request's arrival.
   */
  submit(
    reqId: number,
    model: number,
    promptTokens: number,
    maxOutputTokens: number,
    now: number,
    flags = 0,
    outputTokens = maxOutputTokens,
    leadMs = 0,
    route?: string,
  ): void {
    const m = this.models[model];
    if (m === undefined) throw new RangeError(`unknown model index ${model}`);
    m.attempts++;
    let share = -1;
    /** The phase of a fault that shapes the service (slow first token, stall, cut, ...), or -1. */
    let shaping = -1;
    const total = promptTokens + maxOutputTokens;
    // A model that does not continue prefills refuses them, as the provider validates a request.
    if ((flags & RequestFlag.Prefill) !== 0 && m.cfg.continuation !== 'prefill')
      return this.answer(reqId, model, 400, Detail.PrefillRejected, -1, now);
    const phase = this.faults.arrival(model, now, route);
    if (phase >= 0) {
      const kind = this.faults.kind(phase);
      if (kind === FaultCode.Midstream) share = this.random.next();
      else if (kind >= FaultCode.SlowFirstToken) {
        const refusal = this.refusal(phase, kind, total, flags);
        if (refusal !== Detail.None) return this.answer(reqId, model, 400, refusal, -1, now);
        if (kind !== FaultCode.PrefillRejected && kind !== FaultCode.ContextLength) shaping = phase;
      } else return this.faulted(phase, reqId, model, now);
    }
    if (total > m.cfg.contextTokens) return this.answer(reqId, model, 400, Detail.ContextLength, -1, now);
    if (m.rpm !== null) {
      const wait = m.rpm.waitMs(1, now);
      if (wait !== 0)
        return this.answer(reqId, model, 429, Detail.RateLimitRequests, wait === Infinity ? -1 : wait, now);
    }
    if (m.tpm !== null) {
      const wait = m.tpm.waitMs(total, now);
      if (wait !== 0) return this.answer(reqId, model, 429, Detail.RateLimitTokens, wait === Infinity ? -1 : wait, now);
      m.tpm.take(total, now);
    }
    if (m.rpm !== null) m.rpm.take(1, now);
    if (m.busy >= m.cfg.slots && m.queued >= m.cfg.queue)
      return this.answer(reqId, model, m.cfg.shedStatus, Detail.Overloaded, -1, now);
    const r = this.record(reqId, model, promptTokens, outputTokens, share);
    this.flags[r] = flags;
    this.lead[r] = leadMs;
    this.route[r] = route;
    if (shaping >= 0) {
      this.sfault[r] = this.faults.kind(shaping);
      this.sAfter[r] = this.faults.afterTokens(shaping);
      this.sMs[r] = this.faults.ms(shaping);
      this.sAdd[r] = this.faults.addMs(shaping);
    }
    if (m.busy < m.cfg.slots) return this.start(r, now);
    this.state[r] = QUEUED;
    m.push(r);
    m.queued++;
  }

  /**
   * The caller gave up on `reqId`: nothing is delivered for it afterwards, and the reqId may be
   * reused at once. With cancel-on-disconnect its slot or queue place is freed now; without,
   * the work goes on to the end (holding its slot, queued work still served) and is wasted.
   */
  cancel(reqId: number, now: number): void {
    const r = this.lookup(reqId);
    if (r < 0) return;
    this.unbind(reqId);
    const m = this.models[this.model[r]];
    m.cancelled++;
    const s = this.state[r];
    if (s === HANGING) return this.release(r);
    // Stalled forever, its work never ends: its slot or queue place is freed now, whatever cancelOnDisconnect.
    const forever = this.sfault[r] === FaultCode.Stall && this.sMs[r] === Infinity;
    if (s === STALLED || (forever && s === SERVING)) {
      m.wastedTokens += this.tokens[r];
      m.busy--;
      this.startNext(m, now);
      if (s === STALLED) return this.release(r);
      this.state[r] = DROPPED; // its STALL event, still to come, reclaims it
      return;
    }
    if ((!this.cancelOnDisconnect && !forever) || s === ANSWERING) {
      this.gaveUp[r] = 1;
      return;
    }
    this.state[r] = DROPPED; // reclaimed when dequeued or when its DONE event fires
    if (s === QUEUED) m.queued--;
    else {
      m.busy--;
      this.startNext(m, now);
    }
  }

  handle(kind: number, r: number, now: number): void {
    if (kind === FIRST || kind === STALL) return this.streamEvent(kind, r, now);
    if (this.state[r] === DROPPED) return this.release(r);
    const m = this.models[this.model[r]];
    if (kind === DONE) {
      m.busy--;
      this.startNext(m, now);
      if (this.gaveUp[r] === 1) {
        m.wastedTokens += this.tokens[r];
        return this.release(r);
      }
      m.tokensServed += this.tokens[r];
    }
    if (this.gaveUp[r] === 1) return this.release(r);
    // Read the answer and free the record first: the listener may resubmit under the same reqId.
    const id = this.reqId[r],
      status = this.status[r],
      detail = this.detail[r],
      tokens = this.tokens[r],
      retry = this.retry[r];
    this.unbind(id);
    this.release(r);
    m.byStatus[status]++;
    m.byDetail[detail]++;
    this.listener.onResponse(id, status, detail, tokens, retry, now);
  }

  stats(_now: number): UpstreamStats {
    return { models: this.models.map((m) => modelStats(m)) };
  }

  /**
   * A stream event of record `r`. Always strictly before its DONE, so the record is still its
   * request's — except a forever stall's STALL, its last event, which reclaims a dropped record.
   */
  private streamEvent(kind: number, r: number, now: number): void {
    const forever = kind === STALL && this.sMs[r] === Infinity;
    if (this.state[r] === DROPPED) {
      if (forever) this.release(r);
      return;
    }
    if (forever) this.state[r] = STALLED;
    if (this.gaveUp[r] === 1 || this.listener.onStream === undefined) return;
    const id = this.reqId[r];
    if (kind === STALL) return this.listener.onStream(id, StreamEvent.Stall, this.sMs[r], this.sAfter[r], now);
    this.listener.onStream(id, StreamEvent.FirstToken, this.streamLeft[r], this.tokens[r] - this.prompt[r], now);
  }

  /** The 400 a refusing phase gives this request (`Detail.None`: it lets the request through). */
  private refusal(phase: number, kind: number, total: number, flags: number): number {
    if (kind === FaultCode.ContextLength)
      return total > this.faults.contextTokens(phase) ? Detail.ContextLength : Detail.None;
    if (kind === FaultCode.PrefillRejected)
      return (flags & RequestFlag.Prefill) !== 0 ? Detail.PrefillRejected : Detail.None;
    if (kind === FaultCode.ContentFilter && this.faults.rejects400(phase)) return Detail.ContentFilter;
    return Detail.None;
  }

  /** An arrival hit by fault phase `phase` (not midstream): answered at once, or never (hang). */
  private faulted(phase: number, reqId: number, model: number, now: number): void {
    switch (this.faults.kind(phase)) {
      case FaultCode.Hang:
        this.state[this.record(reqId, model, 0, 0, -1)] = HANGING;
        return;
      case FaultCode.Reset:
        return this.answer(reqId, model, 0, Detail.Reset, -1, now);
      case FaultCode.Quota:
        return this.answer(reqId, model, 429, Detail.InsufficientQuota, -1, now);
      default:
        return this.answer(reqId, model, this.faults.status(phase), Detail.Fault, -1, now);
    }
  }

  /** Answers without doing any work, after the network time. */
  private answer(
    reqId: number,
    model: number,
    status: number,
    detail: number,
    retryAfterMs: number,
    now: number,
  ): void {
    const r = this.record(reqId, model, 0, 0, -1);
    this.state[r] = ANSWERING;
    this.status[r] = status;
    this.detail[r] = detail;
    this.tokens[r] = 0;
    this.retry[r] = retryAfterMs;
    this.scheduler.schedule(now + NETWORK_MS, this.handlerId, ANSWER, r);
  }

  /**
   * Service: ttft + n × tpot, n the output tokens (all of them, or the share done before a
   * midstream break), × the latency fault factor × (1 + loadStretch × busy / slots), `busy`
   * counting the other requests in service: an idle model serves at its base speed.
   */
  private start(r: number, now: number): void {
    const model = this.model[r];
    const m = this.models[model];
    const stretch = 1 + (m.cfg.loadStretch * m.busy) / m.cfg.slots;
    m.busy++;
    this.state[r] = SERVING;
    const share = this.share[r];
    const n = share < 0 ? this.output[r] : Math.floor(share * this.output[r]);
    this.status[r] = 200;
    this.detail[r] = share < 0 ? Detail.None : Detail.MidStream;
    this.tokens[r] = this.prompt[r] + n;
    this.retry[r] = -1;
    if (this.sfault[r] !== 0 || (this.flags[r] & RequestFlag.Stream) !== 0) return this.shaped(r, n, stretch, now);
    const lead = this.lead[r];
    const route = this.route[r];
    const add = this.faults.latencyAddMs(model, now, route);
    let ms: number;
    if (lead === 0) ms = (m.ttft() + n * m.tpot()) * stretch * this.faults.latencyFactor(model, now, route) + add;
    else {
      const ttft = m.ttft();
      const scale = stretch * this.faults.latencyFactor(model, now, route);
      ms = Math.max(0, ttft * scale + add - lead) + n * m.tpot() * scale;
    }
    this.scheduler.schedule(now + Math.max(ms, 0), this.handlerId, DONE, r);
  }

  /**
   * The service of a streamed request or of one a stream fault shapes, on the same times as
   * `start`: the first token at ttft (stretched to the phase's `ttftMs` by `slow-first-token`),
   * then n × tpot — n cut to `afterTokens` by `cut` and `content-filter`, with a `stall`'s gap
   * after its `afterTokens` (a forever stall never ends). FIRST and STALL events only for
   * streamed requests, and only strictly before the answer.
   */
  private shaped(r: number, output: number, stretch: number, now: number): void {
    let n = output;
    const model = this.model[r];
    const m = this.models[model];
    const route = this.route[r];
    const scale = stretch * this.faults.latencyFactor(model, now, route);
    let first = m.ttft() * scale + this.faults.latencyAddMs(model, now, route);
    const tpot = m.tpot() * scale;
    const fault = this.sfault[r];
    const after = this.sAfter[r];
    let stallAt = -1;
    let gap = 0;
    switch (fault) {
      case FaultCode.SlowFirstToken:
        // At least `ttftMs` (when given), then `addMs` on top.
        if (this.sMs[r] > first || this.sAdd[r] > 0) {
          first = Math.max(first, this.sMs[r]) + this.sAdd[r];
          this.detail[r] = Detail.SlowFirstToken;
        }
        break;
      case FaultCode.Stall:
        if (after < n) {
          stallAt = first + after * tpot;
          gap = this.sMs[r];
          this.detail[r] = Detail.Stalled;
        }
        break;
      case FaultCode.Cut:
        if (after < n) {
          n = after;
          this.detail[r] = Detail.Cut;
        }
        break;
      case FaultCode.ContentFilter:
        n = Math.min(n, after);
        this.detail[r] = Detail.ContentFilter;
        break;
      case FaultCode.Malformed:
        if (this.detail[r] === Detail.None) this.detail[r] = Detail.Malformed;
        break;
      case FaultCode.MissingDone:
        if (this.detail[r] === Detail.None) this.detail[r] = Detail.MissingDone;
        break;
    }
    this.tokens[r] = this.prompt[r] + (gap === Infinity ? after : n);
    // What the request waited before its submission comes off its first token (the rest moves with it).
    const lead = Math.min(this.lead[r], first);
    first -= lead;
    if (stallAt >= 0) stallAt -= lead;
    const end = now + first + n * tpot + gap;
    const streamed = (this.flags[r] & RequestFlag.Stream) !== 0;
    if (streamed && now + first < end) {
      this.streamLeft[r] = (gap === Infinity ? after : n) * tpot;
      this.scheduler.schedule(now + first, this.handlerId, FIRST, r);
    }
    if (gap === Infinity) {
      if (streamed) this.scheduler.schedule(now + stallAt, this.handlerId, STALL, r);
      else this.state[r] = STALLED;
      return;
    }
    if (streamed && stallAt >= 0) this.scheduler.schedule(now + stallAt, this.handlerId, STALL, r);
    this.scheduler.schedule(end, this.handlerId, DONE, r);
  }

  /** Gives free slots to the oldest queued requests, reclaiming dropped ones on the way. */
  private startNext(m: ModelState, now: number): void {
    while (m.busy < m.cfg.slots && m.len > 0) {
      const r = m.shift();
      if (this.state[r] === DROPPED) {
        this.release(r);
        continue;
      }
      m.queued--;
      this.start(r, now);
    }
  }

  private record(reqId: number, model: number, prompt: number, output: number, share: number): number {
    if (this.freeTop === 0) this.grow();
    const r = this.free[--this.freeTop];
    this.reqId[r] = reqId;
    this.model[r] = model;
    this.prompt[r] = prompt;
    this.output[r] = output;
    this.share[r] = share;
    this.gaveUp[r] = 0;
    this.flags[r] = 0;
    this.sfault[r] = 0;
    this.route[r] = undefined;
    this.bind(reqId, r);
    return r;
  }

  private bind(reqId: number, r: number): void {
    if (!(reqId >= 0 && reqId < DIRECT_MAX && (reqId | 0) === reqId)) {
      this.byId.set(reqId, r);
      return;
    }
    if (reqId >= this.direct.length) {
      const bigger = new Int32Array(Math.max(this.direct.length * 2, 2 ** Math.ceil(Math.log2(reqId + 1))));
      bigger.set(this.direct);
      this.direct = bigger;
    }
    this.direct[reqId] = r + 1;
  }

  /** The record of `reqId`, -1 if it has none. */
  private lookup(reqId: number): number {
    if (reqId >= 0 && reqId < DIRECT_MAX && (reqId | 0) === reqId)
      return reqId < this.direct.length ? this.direct[reqId] - 1 : -1;
    return this.byId.get(reqId) ?? -1;
  }

  private unbind(reqId: number): void {
    if (reqId >= 0 && reqId < DIRECT_MAX && (reqId | 0) === reqId) this.direct[reqId] = 0;
    else this.byId.delete(reqId);
  }

  private release(r: number): void {
    this.state[r] = FREE;
    this.free[this.freeTop++] = r;
  }

  /** Doubles every record array; the new rows go on the free list, lowest index on top. */
  private grow(): void {
    const cap = Math.max(64, this.cap * 2);
    const f64 = (a: Float64Array) => ((b) => (b.set(a), b))(new Float64Array(cap));
    const i32 = (a: Int32Array) => ((b) => (b.set(a), b))(new Int32Array(cap));
    const u8 = (a: Uint8Array) => ((b) => (b.set(a), b))(new Uint8Array(cap));
    [this.reqId, this.prompt, this.output, this.share, this.tokens, this.retry] = [
      f64(this.reqId),
      f64(this.prompt),
      f64(this.output),
      f64(this.share),
      f64(this.tokens),
      f64(this.retry),
    ];
    [this.sAfter, this.sMs, this.sAdd, this.streamLeft, this.lead] = [
      f64(this.sAfter),
      f64(this.sMs),
      f64(this.sAdd),
      f64(this.streamLeft),
      f64(this.lead),
    ];
    [this.model, this.status, this.detail] = [i32(this.model), i32(this.status), i32(this.detail)];
    [this.state, this.gaveUp, this.flags, this.sfault] = [
      u8(this.state),
      u8(this.gaveUp),
      u8(this.flags),
      u8(this.sfault),
    ];
    this.route.length = cap;
    const free = new Int32Array(cap);
    free.set(this.free.subarray(0, this.freeTop));
    for (let r = cap - 1; r >= this.cap; r--) free[this.freeTop++] = r;
    this.free = free;
    this.cap = cap;
  }
}

/** The names of the models that declare `continuation: prefill`. */
export function continuingModels(models: readonly ModelConfig[]): string[] {
  return models.flatMap((m) => (m.continuation === 'prefill' ? [m.name] : []));
}

function checkModel(m: ModelConfig, i: number): ModelConfig {
  const name = `upstream.models[${i}]`;
  checkNonEmptyString(`${name}.name`, m.name);
  checkInteger(`${name}.slots`, m.slots, 1);
  if (m.queue !== Infinity) checkInteger(`${name}.queue`, m.queue, 0);
  checkInteger(`${name}.shedStatus`, m.shedStatus, 100, 599);
  if (m.rpm !== undefined) checkPositive(`${name}.rpm`, m.rpm);
  if (m.tpm !== undefined) checkPositive(`${name}.tpm`, m.tpm);
  checkNumber(`${name}.loadStretch`, m.loadStretch, 0);
  checkPositive(`${name}.contextTokens`, m.contextTokens);
  if (m.continuation !== undefined) checkOneOf(`${name}.continuation`, m.continuation, ['prefill'] as const);
  return m;
}

function modelStats(m: ModelState): ModelStats {
  const byStatus: Record<string, number> = {};
  m.byStatus.forEach((n, s) => n > 0 && (byStatus[s] = n));
  const byDetail: Record<string, number> = {};
  m.byDetail.forEach((n, d) => n > 0 && (byDetail[DETAIL_NAMES[d]] = n));
  const { busy, queued, attempts, tokensServed, wastedTokens, cancelled } = m;
  return { name: m.cfg.name, busy, queued, attempts, byStatus, byDetail, tokensServed, wastedTokens, cancelled };
}
