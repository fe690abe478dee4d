import type { Classification, ErrorClass } from '../engine/classify.js';
import type { ShedReason } from '../engine/errors.js';
import { Step, type GuardCall } from '../engine/guard-call.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import { CallTable } from './call-table.js';
import type { EngineReplicas } from './engine-replicas.js';
import { EngineSlots } from './engine-slots.js';
import { Code, codeOf } from './outcomes.js';
import type { PlainPolicy } from './retry-policy.js';

/** Timer kinds: a retry is due; an attempt's timeout. A kind may add its own (3–15) through `arm`. */
export const K_RETRY = 1;
export const K_TIMEOUT = 2;
/** Timer events carry the attempt's serial above the timer kind's 4 bits, to spot stale ones. */
const SERIAL_SHIFT = 4;
const KIND_MASK = (1 << SERIAL_SHIFT) - 1;
/**
 * The last attempt serial before the count starts again at 1: with the kind below it, it fills
 * a timer event's 31-bit kind, so a timer names its attempt's whole serial.
 */
export const MAX_SERIAL = 0x7ffffff;

/** Where a call is made (a layer of the tree, or one tool call of a layer): how its calls retry and end. */
export interface CallSite {
  /** Its retry policy when not the engine. */
  plain: PlainPolicy | undefined;
  /** Its engines, one per replica, when its policy is `engine`. */
  engines: EngineReplicas | undefined;
  /** Longest an attempt may take, ms (Infinity: none). */
  timeoutMs: number;
  /** The budget of its stage, ms (Infinity: no stage): each call ends when it is spent, retries and waits included. */
  budget: number;
  /** A call out of its stage's budget returns what it has (a partial result) instead of failing. */
  partial: boolean;
  /** Its engine's limits pick buckets by key: its calls carry their keys. */
  keyed: boolean;
  /** What its calls send and report. */
  kind: CallKind;
}

/**
 * What the calls of one kind (model calls, tool calls) do at the points where kinds differ:
 * what an attempt sends, what a timer abandons, whom a report goes to. The driver decides
 * everything else, the same way for every kind.
 */
export interface CallKind {
  /** A call was opened (its fields set): fill its own; its engine's token estimate. */
  opened(id: number): number;
  /** Its limit keys (asked only for a site whose limits are keyed). */
  limitKeys(id: number): Record<string, string>;
  /** Attempt `serial` of call `id` starts and must end within `timeoutMs`: send it. */
  dispatch(id: number, serial: number, timeoutMs: number, now: number): void;
  attempted(id: number, isRetry: boolean, now: number): void;
  /**
   * A timer of the attempt in flight fired (`what`: `K_TIMEOUT`, or a kind of the kind's own):
   * the class the attempt ends with (its request cancelled, its end reported), or undefined
   * when there is nothing to abandon.
   */
  expired(what: number, id: number, timerKind: number, now: number): Classification | undefined;
  /** The engine, or its concurrency slots, refused call `id`: report it and end it (`CallDriver.finish`). */
  refused(id: number, reason: ShedReason, now: number): void;
  /** An attempt ended in failure having used `usedTokens` (−1: unknown; the sum below it for a non-leaf). */
  failed(id: number, usedTokens: number, now: number): void;
  outOfBudget(id: number, partial: boolean, now: number): void;
  /** Call `id` is over (still in the table): report it. */
  finished(id: number, ok: boolean, partial: boolean, now: number): void;
  /** A root call is over, freed. */
  rootEnded(root: number, ok: boolean, partial: boolean, degraded: boolean, now: number): void;
  /** A call's result of `tokens` came after its parent's attempt gave up on it (`site`: the call's). */
  discarded(site: number, tokens: number, now: number): void;
  /** A child of attempt `parentSerial` of `parent` (a call of this kind) ended. */
  childEnded(
    parent: number,
    parentSerial: number,
    code: number,
    tokens: number,
    degraded: boolean,
    truncated: number,
    partial: boolean,
    now: number,
  ): void;
}

/**
 * The one loop every call goes through, model call or tool call: start → attempt → attempt
 * ended → retry or finish. It applies the call's retry policy (a plain one, or the engine
 * through its synchronous `GuardCall`, with its concurrency slots), its stage's budget (from
 * the call's start, retries, backoffs and waits included), its deadline (an engine attempt
 * never outlives it; a staged one never outlives the stage) and its attempt timeout, and
 * numbers attempts with one serial count, so a stale timer, answer or child result is known
 * whatever kind of call it belongs to. Kinds say what an attempt sends and whom to tell
 * (`CallKind`); all calls live in one `CallTable`, so a tool call's parent is found there as a
 * model call's is.
 */
export class CallDriver implements EventHandler {
  readonly calls = new CallTable();
  private readonly sites: CallSite[] = [];
  private guardCalls: Array<GuardCall | undefined> = [];
  private readonly handlerId: number;
  private nextSerial: number;
  /** The engines' concurrency slots, once a site's engine limits its concurrency. */
  private slots: EngineSlots | undefined;

  /** `firstSerial`: the serial of the first attempt (tests start near the wrap). */
  constructor(
    private readonly scheduler: Scheduler,
    firstSerial = 1,
  ) {
    this.handlerId = scheduler.register(this);
    this.nextSerial = firstSerial;
  }

  /** Adds a call site; its index is what `start` takes and `calls.layer` holds. */
  addSite(site: CallSite): number {
    if (this.slots === undefined && site.engines?.guards[0].concurrency !== undefined)
      this.slots = new EngineSlots(this.scheduler, {
        granted: (id, now) => this.attempt(id, now),
        refused: (id, reason, now) => this.sites[this.calls.layer[id]].kind.refused(id, reason, now),
      });
    return this.sites.push(site) - 1;
  }

  site(ix: number): CallSite {
    return this.sites[ix];
  }

  /**
   * Starts a call at `site` below attempt `parentSerial` of `parent` (−1: a root call of root
   * task `root`), bound to tree node `key`, ending by `deadline`; `start` is when it counts from
   * (a root's intended start). Its first attempt goes at once unless refused.
   */
  start(
    site: number,
    parent: number,
    parentSerial: number,
    key: number,
    root: number,
    deadline: number,
    start: number,
    now: number,
  ): void {
    const c = this.calls;
    const id = c.alloc();
    if (id >= this.guardCalls.length) this.guardCalls.length = c.layer.length;
    c.layer[id] = site;
    c.parent[id] = parent;
    c.parentSerial[id] = parentSerial;
    c.key[id] = key;
    c.root[id] = parent < 0 ? root : c.root[parent];
    c.attempts[id] = 0;
    c.start[id] = start;
    c.deadline[id] = deadline;
    c.reqId[id] = -1;
    c.target[id] = 0;
    // A call that ends before its first attempt (out of budget at once) has nothing of the call that had its id.
    this.clearAttempt(id);
    const s = this.sites[site];
    // A stage's budget runs from the call's start: its retries, backoffs and queue waits all spend it.
    if (start + s.budget < deadline) c.deadline[id] = start + s.budget;
    const tokens = s.kind.opened(id);
    if (s.engines !== undefined) {
      const guard = s.engines.pick();
      this.slots?.bind(id, guard.concurrency);
      const keys = s.keyed ? s.kind.limitKeys(id) : undefined;
      this.guardCalls[id] = guard.start(now, { deadlineAt: c.deadline[id], tokens, keys });
    }
    this.attempt(id, now);
  }

  /** Starts the next attempt of call `id`, unless its budget is spent or its engine refuses it. */
  private attempt(id: number, now: number): void {
    const c = this.calls;
    const s = this.sites[c.layer[id]];
    const gc = this.guardCalls[id];
    let isRetry: boolean;
    let timeout = s.timeoutMs;
    if (s.budget !== Infinity && c.deadline[id] <= now) return this.outOfBudget(id, now);
    if (gc !== undefined) {
      // A concurrency slot first, as guard.run takes one before asking the call's next step.
      if (this.slots !== undefined && !this.slots.take(id, now)) return;
      if (gc.next(now) !== Step.Attempt) return s.kind.refused(id, gc.shedReason!, now);
      c.target[id] = gc.targetIndex;
      isRetry = gc.attempts > 1;
      const left = c.deadline[id] - now;
      if (left < timeout) timeout = left;
    } else {
      isRetry = c.attempts[id] > 0;
      // Any policy: an attempt of a staged call never outlives the stage's budget.
      if (s.budget !== Infinity && c.deadline[id] - now < timeout) timeout = c.deadline[id] - now;
    }
    c.attempts[id]++;
    s.kind.attempted(id, isRetry, now);
    const serial = this.nextSerial;
    this.nextSerial = serial >= MAX_SERIAL ? 1 : serial + 1;
    c.serial[id] = serial;
    c.attemptStart[id] = now;
    this.clearAttempt(id);
    if (timeout !== Infinity) this.arm(now + timeout, K_TIMEOUT, id);
    s.kind.dispatch(id, serial, timeout, now);
  }

  private clearAttempt(id: number): void {
    const c = this.calls;
    c.tokens[id] = 0;
    c.truncated[id] = 0;
    c.failCode[id] = Code.Ok;
    c.degraded[id] = 0;
    c.partial[id] = 0;
  }

  /** A timer `what` (a `K_*` kind, not `K_RETRY`) for the attempt in flight of call `id`, due at `at`. */
  arm(at: number, what: number, id: number): void {
    this.scheduler.schedule(at, this.handlerId, what | (this.calls.serial[id] << SERIAL_SHIFT), id);
  }

  /** The timer `timerKind` (as `expired` was handed it) again, at `at`. */
  rearm(at: number, timerKind: number, id: number): void {
    this.scheduler.schedule(at, this.handlerId, timerKind, id);
  }

  handle(kind: number, id: number, now: number): void {
    if (kind === K_RETRY) return this.attempt(id, now);
    // A timer of an attempt that already ended is stale.
    const c = this.calls;
    if (c.serial[id] === 0 || c.serial[id] !== kind >>> SERIAL_SHIFT) return;
    const cls = this.sites[c.layer[id]].kind.expired(kind & KIND_MASK, id, kind, now);
    if (cls !== undefined) this.ended(id, Code.Timeout, cls, -1, now);
  }

  /**
   * The committed answer of call `id` broke (`cls`) and is to be continued: its engine sends the
   * next attempts only to targets that declare continuation (`GuardCall.resume`). False when the
   * call has no engine (nothing to resume it).
   */
  resume(id: number, cls: ErrorClass): boolean {
    const gc = this.guardCalls[id];
    if (gc === undefined) return false;
    gc.resume(cls);
    return true;
  }

  /** An attempt of call `id` ended with `code` (`cls`); decide: retry later, or finish the call. */
  ended(id: number, code: number, cls: Classification, usedTokens: number, now: number): void {
    const c = this.calls;
    c.serial[id] = 0;
    this.slots?.release(id, now);
    const s = this.sites[c.layer[id]];
    if (code !== Code.Ok) s.kind.failed(id, usedTokens, now);
    const gc = this.guardCalls[id];
    const staged = s.budget !== Infinity;
    let delay: number;
    if (gc !== undefined) {
      const step = gc.complete(cls, now - c.attemptStart[id], usedTokens, now);
      if (step === Step.Done) return this.finish(id, Code.Ok, now);
      if (staged && now >= c.deadline[id]) return this.outOfBudget(id, now);
      if (step === Step.Shed) return s.kind.refused(id, gc.shedReason!, now);
      if (step === Step.Fail) return this.finish(id, code === Code.Timeout ? Code.Retryable : codeOf(cls), now);
      delay = gc.delayMs;
    } else {
      if (code === Code.Ok) return this.finish(id, Code.Ok, now);
      if (staged && now >= c.deadline[id]) return this.outOfBudget(id, now);
      delay = s.plain!.delayAfter(c.attempts[id], cls);
      if (delay < 0) return this.finish(id, code === Code.Timeout ? Code.Retryable : code, now);
    }
    // A retry that could not start before the budget is spent would only wait it out.
    if (staged && now + delay >= c.deadline[id]) return this.outOfBudget(id, now);
    this.scheduler.schedule(now + delay, this.handlerId, K_RETRY, id);
  }

  /** Call `id` spent its stage's budget: it returns what it has (a partial result) if its site says so, else fails. */
  private outOfBudget(id: number, now: number): void {
    const s = this.sites[this.calls.layer[id]];
    s.kind.outOfBudget(id, s.partial, now);
    if (!s.partial) return this.finish(id, Code.NoRetry, now);
    this.finish(id, Code.Ok, now, true);
  }

  /** Call `id` is over with `code`: report it, free it, hand its result to its parent's attempt. */
  finish(id: number, code: number, now: number, outOfBudget = false): void {
    const c = this.calls;
    const siteIx = c.layer[id];
    const kind = this.sites[siteIx].kind;
    const ok = code === Code.Ok;
    const partial = ok && (outOfBudget || c.partial[id] === 1);
    kind.finished(id, ok, partial, now);
    const parent = c.parent[id];
    const parentSerial = c.parentSerial[id];
    const tokens = ok ? c.tokens[id] : 0;
    const truncated = ok ? c.truncated[id] : 0;
    const degraded = ok && c.degraded[id] === 1;
    const root = c.root[id];
    this.guardCalls[id] = undefined;
    this.slots?.release(id, now);
    c.release(id);
    if (parent < 0) return kind.rootEnded(root, ok, partial, degraded, now);
    if (c.serial[parent] !== parentSerial) {
      if (tokens > 0) kind.discarded(siteIx, tokens, now); // the parent's attempt gave up on us
      return;
    }
    this.sites[c.layer[parent]].kind.childEnded(parent, parentSerial, code, tokens, degraded, truncated, partial, now);
  }
}
