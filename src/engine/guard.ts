import { classify, classifyStatus, type AttemptResult, type Classification, type ErrorClass } from './classify.js';
import { sleep } from './clock.js';
import { ShedError, StormlabError } from './errors.js';
import type { Clock } from './clock.js';
import { Step, type GuardCall } from './guard-call.js';
import { GuardCore, type GuardSnapshot, type StartOptions } from './guard-core.js';
import type { GuardListener } from './guard-events.js';
import type { GuardOptions } from './guard-options.js';
import type { DeferredOutcome } from './deferred-outcome.js';
import type { Target } from './target.js';
import { withIdempotency } from './with-idempotency.js';

const SUCCESS = classifyStatus(200);
/** `settle`'s answer when the call goes on after a wait. */
const WAIT = Symbol('wait');

/** What an attempt function sees: which try this is, where it goes, and its cut-off signal. */
export interface AttemptContext {
  /** 1 for the first attempt on the current target. */
  readonly attempt: number;
  /** The target this attempt goes to (the primary unless degraded): origin, model, rewrite. */
  readonly target: Target;
  /** `target.name`. */
  readonly targetName: string;
  /** Aborts when the attempt times out, the deadline passes or the caller aborts. */
  readonly signal: AbortSignal | undefined;
  readonly deadlineAt: number;
  readonly degraded: boolean;
  /**
   * For an attempt that hands its answer over before it is complete (a stream at its first
   * token): call before returning, then `settle` the handle with the final outcome. The call
   * ends when the attempt returns; the target's breaker and throttle learn the outcome later.
   */
  defer(): DeferredOutcome;
  /** Counts a malformed stream event on this target (a `stream_malformed` event, not a failure). */
  malformed(): void;
  /**
   * The answer this attempt committed broke (`cls`: `stream_cut`, `stream_stall`) and its rest
   * is to be asked for: call before returning the break as a retryable failure. The next
   * attempts go only to targets that declare `continuation: 'prefill'` (see `GuardCall.resume`).
   */
  resume(cls: ErrorClass): void;
}

export interface RunOptions<R> extends StartOptions {
  /** Deadline for this call, relative to now; ignored when `deadlineAt` is given. */
  timeoutMs?: number;
  /** The caller's own cancel signal: aborting it ends the call (not counted against the upstream). */
  signal?: AbortSignal;
  /** Turns a returned value into an attempt result, for APIs that return errors (fetch's Response). */
  classify?: (value: R) => AttemptResult | undefined;
  /** Tokens the upstream reported for a returned value (prompt + completion), to reconcile buckets. */
  usage?: (value: R) => number | undefined;
  /** With the guard's `idempotency` store: run at most once per key; duplicates get the receipt. */
  idempotencyKey?: string;
}

export interface GuardResult<R> {
  value: R;
  /** False when the value is the upstream's final error answer (from `classify`). */
  ok: boolean;
  /** True when a fallback target answered. */
  degraded: boolean;
  /** Name of the target that answered. */
  target: string;
  /** The target that answered (its origin, model, context window). */
  answeredBy: Target;
  attempts: number;
  /** True when the value is a stored receipt of an earlier run with the same idempotency key. */
  replayed: boolean;
}

/** An attempt outlived its timeout or the call's deadline. Classified as `timeout`. */
export class AttemptTimeoutError extends StormlabError {
  constructor(ms: number) {
    super('ERR_STORMLAB_TIMEOUT', `attempt timed out after ${Math.round(ms)} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * What a guard shows of itself to whoever watches it (the Prometheus adapter, a dashboard):
 * its name, its clock, its state at a time, its events. `Guard` and the core the simulator
 * drives both have it.
 */
export interface GuardView {
  /** `GuardOptions.name`: what metrics and state keys call it. */
  readonly name: string;
  readonly clock: Clock;
  snapshot(now?: number): GuardSnapshot;
  subscribe(listener: GuardListener): () => void;
}

/**
 * The engine for users: `await guard.run(fn)` runs `fn` under the retry budget, adaptive
 * throttle, circuit breakers, token buckets, concurrency limit, deadline, backoff and
 * fallback chain, in the order ARCHITECTURE.md gives ("The engine"). The decisions are the
 * synchronous `GuardCall` state machine of a `GuardCore` this guard holds (and does not
 * expose: the primitives and the synchronous calls are the simulator's, not an API); this
 * class only awaits, sleeps and times out.
 */
export class Guard implements GuardView {
  private readonly core: GuardCore;
  /** The core's clock, read on every call. */
  private readonly clk: Clock;
  private readonly idem: GuardOptions['idempotency'];
  /** No attempt timeout: an attempt needs a timer only for a deadline or a caller's signal. */
  private readonly untimed: boolean;
  /** No deadline, no attempt timeout, no concurrency limit: calls without options take `execPlain`. */
  private readonly plain: boolean;

  constructor(options: GuardOptions = {}) {
    const core = new GuardCore(options);
    this.core = core;
    this.clk = core.clock;
    this.idem = options.idempotency;
    this.untimed = core.options.attemptTimeoutMs === Infinity;
    this.plain = this.untimed && core.timeoutMs === Infinity && core.concurrency === undefined;
    cores.set(this, core);
  }

  get name(): string {
    return this.core.options.name;
  }

  get clock(): Clock {
    return this.clk;
  }

  /** The targets of its fallback chain, in order (the primary first). */
  get targets(): readonly Target[] {
    return this.core.targets;
  }

  /** The state of its budget, throttles, breakers, buckets and concurrency limit at `now` (default: its clock's now). */
  snapshot(now: number = this.clk.now()): GuardSnapshot {
    return this.core.snapshot(now);
  }

  /** Adds a listener for its `GuardEvent`s; returns a function that removes it. */
  subscribe(listener: GuardListener): () => void {
    return this.core.subscribe(listener);
  }

  /**
   * Runs `fn` under the guard and resolves to its value. Throws the upstream's own error when
   * the guard gives up, or a `ShedError` when it refused locally. A value that `opts.classify`
   * calls a final failure (e.g. a 400 Response) is returned as it is.
   */
  run<R>(fn: (ctx: AttemptContext) => R | Promise<R>, opts?: RunOptions<R>): Promise<R> {
    // The plain case is tested here, not in exec: the JIT then inlines the whole plain path.
    return (opts === undefined && this.plain ? this.execPlain(fn, false) : this.exec(fn, opts, false)) as Promise<R>;
  }

  /** Like `run`, with what happened: `{ value, ok, degraded, target, attempts, replayed }`. */
  runDetailed<R>(fn: (ctx: AttemptContext) => R | Promise<R>, opts?: RunOptions<R>): Promise<GuardResult<R>> {
    return (opts === undefined && this.plain ? this.execPlain(fn, true) : this.exec(fn, opts, true)) as Promise<
      GuardResult<R>
    >;
  }

  private exec<R>(
    fn: (ctx: AttemptContext) => R | Promise<R>,
    opts: RunOptions<R> | undefined,
    detailed: boolean,
  ): Promise<R | GuardResult<R>> {
    if (opts?.signal?.aborted) return Promise.reject(opts.signal.reason);
    if (this.idem !== undefined && opts?.idempotencyKey !== undefined) return this.runOnce(fn, opts, detailed);
    const now = this.clk.now();
    const call = this.begin(now, opts);
    if (this.core.concurrency !== undefined) return this.loop(fn, opts, call, false, undefined, detailed);
    // Fast path for the first attempt: no async frame, one `then`. Retries continue in `loop`.
    if (call.next(now) !== Step.Attempt) return Promise.reject(this.shedError(call, undefined));
    const cancel =
      this.untimed && call.deadlineAt === Infinity && opts?.signal === undefined
        ? undefined
        : this.arm(call, now, opts?.signal);
    const pending = invoke(fn, call);
    return pending.then(
      (value) => {
        cancel?.();
        const r = this.settle(call, now, value, undefined, false, opts, detailed);
        return r === WAIT ? this.loop(fn, opts, call, true, value, detailed) : r;
      },
      (err: unknown) => {
        cancel?.();
        const r = this.settle(call, now, undefined, err, true, opts, detailed);
        return r === WAIT ? this.loop(fn, opts, call, true, err, detailed) : r;
      },
    );
  }

  /**
   * The commonest call — no options, no attempt timeout, no concurrency limit — with the
   * fewest allocations: the same GuardCall decisions, one `then`, and handlers whose closure
   * holds only what they use. At some tens of nanoseconds a call, what a guarded call costs
   * is mostly what it allocates. (Neither `bind` nor a GuardCall subclass: with a bundler that
   * keeps function names, as tsx does, both fall off V8's fast paths and cost ten times more.)
   */
  private execPlain<R>(fn: (ctx: AttemptContext) => R | Promise<R>, detailed: boolean): Promise<R | GuardResult<R>> {
    const now = this.clk.now();
    const call = this.core.start(now);
    if (call.next(now) !== Step.Attempt) return Promise.reject(this.shedError(call, undefined));
    const pending = invoke(fn, call);
    if (detailed)
      return pending.then(
        (value) => {
          this.plainDone(call, now);
          return this.result(call, value, true);
        },
        (err: unknown) => this.plainRetry(fn, call, now, err, true),
      );
    return pending.then(
      (value) => {
        this.plainDone(call, now);
        return value;
      },
      (err: unknown) => this.plainRetry(fn, call, now, err, false),
    );
  }

  private plainDone(call: GuardCall, started: number): void {
    const end = this.clk.now();
    call.complete(SUCCESS, end - started, -1, end); // a success is always Step.Done
  }

  private plainRetry<R>(
    fn: (ctx: AttemptContext) => R | Promise<R>,
    call: GuardCall,
    started: number,
    err: unknown,
    detailed: boolean,
  ): Promise<R | GuardResult<R>> | R | GuardResult<R> {
    const r = this.settle<R>(call, started, undefined, err, true, undefined, detailed);
    return r === WAIT ? this.loop(fn, undefined, call, true, err, detailed) : r;
  }

  private begin<R>(now: number, opts: RunOptions<R> | undefined): GuardCall {
    if (opts?.timeoutMs === undefined || opts.deadlineAt !== undefined) return this.core.start(now, opts);
    return this.core.start(now, { ...opts, deadlineAt: now + opts.timeoutMs });
  }

  /** At most once per idempotency key: the stored receipt is the detailed result. */
  private async runOnce<R>(
    fn: (ctx: AttemptContext) => R | Promise<R>,
    opts: RunOptions<R>,
    detailed: boolean,
  ): Promise<R | GuardResult<R>> {
    const { store, leaseMs } = this.idem!;
    const run = (): Promise<GuardResult<R>> =>
      this.loop(fn, opts, this.begin(this.clk.now(), opts), false, undefined, true) as Promise<GuardResult<R>>;
    const r = await withIdempotency(
      { store, key: opts.idempotencyKey!, clock: this.clk, random: this.core.random, leaseMs },
      run,
    );
    const result = r.status === 'replayed' ? { ...r.value, replayed: true } : r.value;
    return detailed ? result : result.value;
  }

  /** The general path: concurrency slots, backoff waits, retries and fallbacks. */
  private async loop<R>(
    fn: (ctx: AttemptContext) => R | Promise<R>,
    opts: RunOptions<R> | undefined,
    call: GuardCall,
    waiting: boolean,
    lastOutcome: unknown,
    detailed: boolean,
  ): Promise<R | GuardResult<R>> {
    const clock = this.clk;
    for (;;) {
      if (waiting && call.delayMs > 0) await sleep(clock, call.delayMs, opts?.signal);
      waiting = true;
      opts?.signal?.throwIfAborted(); // the caller gave up while we waited: no attempt
      const release = this.core.concurrency === undefined ? undefined : await this.admit(call, opts?.signal);
      const now = clock.now();
      // next() answers Attempt or Shed; moving past an open breaker to a fallback happens inside it.
      if (call.next(now) !== Step.Attempt) {
        release?.();
        throw this.shedError(call, lastOutcome);
      }
      const cancel = this.arm(call, now, opts?.signal);
      let value: R | undefined;
      let err: unknown;
      let threw = false;
      try {
        value = await fn(call);
      } catch (e) {
        err = e;
        threw = true;
      }
      cancel?.();
      // A stream handed over early keeps its concurrency slot until its outcome is settled.
      const deferred = release === undefined || threw ? undefined : call.deferred;
      if (deferred !== undefined) deferred.hold(release!);
      else release?.();
      lastOutcome = threw ? err : value;
      const r = this.settle(call, now, value, err, threw, opts, detailed);
      if (r !== WAIT) return r;
    }
  }

  /**
   * Records an attempt's outcome and answers: a final result, `WAIT` (retry or fall back
   * after `call.delayMs`), or throws the error that ends the call.
   */
  private settle<R>(
    call: GuardCall,
    started: number,
    value: R | undefined,
    err: unknown,
    threw: boolean,
    opts: RunOptions<R> | undefined,
    detailed: boolean,
  ): R | GuardResult<R> | typeof WAIT {
    let cls: Classification;
    let used = -1;
    const now = this.clk.now();
    if (opts === undefined && !threw) {
      cls = SUCCESS;
    } else if (threw) {
      cls = classify({ error: err, cancelled: opts?.signal?.aborted === true }, now);
    } else {
      const res = opts?.classify?.(value as R);
      cls = res === undefined ? SUCCESS : classify(res, now);
      if (opts?.usage) used = opts.usage(value as R) ?? -1;
    }
    const step = call.complete(cls, now - started, used, now);
    if (step === Step.Done) return detailed ? this.result(call, value as R, true) : (value as R);
    if (step === Step.Wait) return WAIT;
    const error = step === Step.Shed ? this.shedError(call, threw ? err : value) : threw ? err : undefined;
    if (error === undefined) return detailed ? this.result(call, value as R, false) : (value as R);
    throw error;
  }

  private shedError(call: GuardCall, cause: unknown): ShedError {
    return new ShedError(call.shedReason!, { retryAfterMs: call.retryAfterMs, cause });
  }

  private result<R>(call: GuardCall, value: R, ok: boolean): GuardResult<R> {
    return {
      value,
      ok,
      degraded: call.degraded,
      target: call.targetName,
      answeredBy: call.target,
      attempts: call.attempts,
      replayed: false,
    };
  }

  /** Waits for a concurrency slot; a refusal is a shed like any other. */
  private async admit(call: GuardCall, signal: AbortSignal | undefined): Promise<() => void> {
    try {
      return await this.core.concurrency!.acquire(this.clk, signal);
    } catch (err) {
      if (err instanceof ShedError && this.core.listener) {
        this.core.emit({
          type: 'shed',
          at: this.clk.now(),
          target: call.targetName,
          reason: err.reason,
          retryAfterMs: err.retryAfterMs,
          retry: call.isRetry,
        });
      }
      throw err;
    }
  }

  /**
   * Gives the attempt a signal that aborts at min(attempt timeout, deadline) or when the
   * caller aborts. Costs nothing when there is neither a limit nor a caller signal.
   */
  private arm(call: GuardCall, now: number, outer: AbortSignal | undefined): (() => void) | undefined {
    const limit = Math.min(this.core.options.attemptTimeoutMs, call.deadlineAt - now);
    if (limit === Infinity && outer === undefined) {
      call.signal = undefined;
      return undefined;
    }
    const ac = new AbortController();
    call.signal = ac.signal;
    const onAbort = (): void => ac.abort(outer!.reason);
    outer?.addEventListener('abort', onAbort, { once: true });
    const cancel =
      limit === Infinity ? undefined : this.clk.setTimer(limit, () => ac.abort(new AttemptTimeoutError(limit)));
    return () => {
      cancel?.();
      outer?.removeEventListener('abort', onAbort);
    };
  }
}

const cores = new WeakMap<Guard, GuardCore>();

/**
 * The core a guard holds: for the engine's own tests and tools, never exported from
 * `stormlab/engine` (what the simulator drives synchronously is not the users' API).
 */
export function coreOf(guard: Guard): GuardCore {
  return cores.get(guard)!;
}

/** Calls the attempt function; a synchronous throw becomes a rejection like an async one. */
function invoke<R>(fn: (ctx: AttemptContext) => R | Promise<R>, call: GuardCall): Promise<R> {
  try {
    return Promise.resolve(fn(call));
  } catch (err) {
    return Promise.reject(err);
  }
}
