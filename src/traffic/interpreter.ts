import type { Classification } from '../engine/classify.js';
import type { Clock } from '../engine/clock.js';
import type { ShedReason } from '../engine/errors.js';
import type { SeededRandom } from '../engine/random.js';
import { sampler } from '../upstream/distribution.js';
import { Detail, RequestFlag, StreamEvent, type UpstreamListener } from '../upstream/response.js';
import type { Scheduler } from '../upstream/scheduler.js';
import type { CallTable } from './call-table.js';
import { CallDriver, type CallKind, K_TIMEOUT } from './call-driver.js';
import type { LayerConfig, TrafficConfig } from './config.js';
import { keyedLimits, resolveEngine } from './engine-guard.js';
import { EngineReplicas, type EngineStores } from './engine-replicas.js';
import type { LeafTransport, TrafficObserver } from './observer.js';
import { Code, TIMEOUT, classifyCode, classifyUpstream, codeOf } from './outcomes.js';
import { plainPolicy } from './retry-policy.js';
import { TreeShape, childKey } from './shape.js';
import { StreamLeaf, K_FIRST_TOKEN, K_IDLE } from './stream-leaf.js';
import { StreamResume } from './stream-resume.js';
import type { TargetOption } from '../engine/target.js';
import { EntryGate } from './entry-gate.js';
import { ImpatientUsers } from './impatient-users.js';
import { InferenceGate } from './inference-gate.js';
import { CHILD_NO_RETRY } from './outcomes.js';
import { type ToolCallOwner, ToolCalls } from './tool-calls.js';
import type { ToolObserver, ToolTransport } from './tool-observer.js';

/** What the observer is told for an upstream attempt that never answered in time. */
export const STATUS_NO_ANSWER = -1;

interface Layer {
  cfg: LayerConfig;
  leaf: boolean;
  /** The layer's engines, one per replica, when its policy is `engine`. */
  engines: EngineReplicas | undefined;
  /** Leaf layers: upstream model index per engine target / fallback position. */
  models: number[];
  /** A leaf layer whose calls are streamed: how its callers read streams. */
  stream: StreamLeaf | undefined;
  /** A streamed engine layer that continues broken committed streams on declaring models (`stream.resume`). */
  resume: boolean;
}

/**
 * The fan-out interpreter: turns root tasks into calls down the layers and leaf attempts to
 * the upstream, each call driven by the one `CallDriver` (its layer's retry policy — none,
 * naive, the OpenAI SDK's, or the engine through its synchronous `GuardCall` — its stage
 * budget, deadline and timeout), as tool calls are; it is the `CallKind` of model calls.
 * Event-driven through a `Scheduler`, so the simulator (virtual time) and the live driver
 * (real time, HTTP) run the same code.
 *
 * A call's attempt at a non-leaf layer starts all its children and succeeds when all of them
 * succeed; a child's failure fails the attempt when the last child ends (siblings are not
 * cancelled), so at full outage each layer multiplies the attempts below it by its own.
 * An attempt that times out abandons its children: they run on (their results are stale,
 * their tokens wasted) unless their deadline stops them — which only the engine checks.
 */
export class TrafficInterpreter implements CallKind, UpstreamListener {
  /** Every call in flight, model and tool calls alike. */
  readonly calls: CallTable;
  private readonly driver: CallDriver;
  private readonly layers: Layer[];
  private readonly shape: TreeShape;
  private readonly prompt: () => number;
  private readonly completion: () => number;
  private readonly counts: Float64Array;
  private roots = 0;
  /** Called when a root task ends (closed-loop arrivals use it). */
  onRootDone: ((now: number) => void) | undefined = undefined;
  /** The scenario's tool calls (the tool service answers them), and impatient users, when it has them. */
  readonly toolCalls: ToolCalls | undefined;
  private readonly users: ImpatientUsers | undefined;
  private readonly toolObserver: ToolObserver | undefined;
  /** Tenants and the entry limit, when the scenario has them. */
  private readonly gate: EntryGate | undefined;
  /** The last layer's inference limit, when it has one; `fallbackTarget` is its fallback model's place in the layer's models. */
  private readonly inference: InferenceGate | undefined;
  private readonly fallbackTarget: number = -1;
  /** Root tasks (with users) whose last submission ended with a partial result, until their user settles. */
  private readonly partialRoots = new Set<number>();
  /** What resuming calls carry (streamed engine layers with `stream.resume` and a declaring model only). */
  private readonly resumes: StreamResume | undefined;

  /** `firstSerial`: the first attempt's serial (`CallDriver`). */
  constructor(
    config: TrafficConfig,
    scheduler: Scheduler,
    private readonly transport: LeafTransport,
    private readonly observer: TrafficObserver,
    random: SeededRandom,
    toolWorld?: { transport?: ToolTransport; observer: ToolObserver },
    firstSerial?: number,
    /** Where the engines keep their state when it is shared beyond this process (a fleet's Redis). */
    engineStores?: EngineStores,
  ) {
    const n = config.layers.length;
    this.driver = new CallDriver(scheduler, firstSerial);
    this.calls = this.driver.calls;
    const clock: Clock = {
      now: () => scheduler.now(),
      setTimer: () => {
        throw new Error('the traffic interpreter drives guards synchronously');
      },
    };
    this.layers = config.layers.map((cfg, i) => {
      const leaf = i === n - 1;
      const names = leaf ? (cfg.models ?? []) : [config.layers[i + 1].name];
      const models = leaf ? names.map((m) => transport.modelIndex(m)) : [];
      // A model that continues prefills is a target that declares it (the scenario's one declaration).
      const continuing = models.map((m) => transport.continues?.(m) === true);
      const targets = names.map((name, j): TargetOption => (continuing[j] ? { name, continuation: 'prefill' } : name));
      const r = random.split(`layer:${cfg.name}`);
      const engines =
        cfg.retry.policy === 'engine'
          ? new EngineReplicas(
              config.engine,
              cfg.retry.engine,
              cfg.replicas ?? 1,
              cfg.name,
              targets,
              clock,
              r,
              engineStores,
            )
          : undefined;
      const stream =
        leaf && cfg.stream === true
          ? new StreamLeaf(cfg, config.engine, transport.lastEventAt !== undefined)
          : undefined;
      const budget = cfg.stage === undefined ? Infinity : (config.stages?.[cfg.stage] ?? Infinity);
      const e = cfg.retry.policy === 'engine' ? resolveEngine(config.engine, cfg.retry.engine) : undefined;
      const headers = leaf && stream === undefined && e !== undefined ? e.headersTimeoutMs : Infinity;
      const timeoutMs = Math.min(cfg.timeoutMs, headers);
      const keyed = e !== undefined && keyedLimits(e);
      const plain = plainPolicy(cfg.retry, r.split('policy'));
      this.driver.addSite({ plain, engines, timeoutMs, budget, partial: cfg.partial === true, keyed, kind: this });
      const resume =
        stream !== undefined &&
        e !== undefined &&
        e.stream.commit === 'first-token' &&
        e.stream.resume &&
        continuing.some(Boolean);
      return { cfg, leaf, engines, models, stream, resume };
    });
    this.resumes = this.layers.some((l) => l.resume) ? new StreamResume() : undefined;
    this.shape = new TreeShape(config.layers, random.split('shape').seed);
    this.prompt = sampler(config.tokens.prompt, random.split('prompt'));
    this.completion = sampler(config.tokens.completion, random.split('completion'));
    this.counts = new Float64Array(n);
    this.deadlineMs = config.deadlineMs;
    this.toolObserver = toolWorld?.observer;
    const inference = config.layers[n - 1].inference;
    if (inference !== undefined) {
      this.fallbackTarget =
        inference.fallback === undefined ? -1 : (config.layers[n - 1].models ?? []).indexOf(inference.fallback);
      this.inference = new InferenceGate(inference, scheduler, toolWorld?.observer, {
        current: (id, serial) => this.calls.serial[id] === serial,
        send: (id, now) => this.sendLeaf(id, now),
        giveUp: (id, fallback, now) => this.inferenceGaveUp(id, fallback, now),
      });
    }
    if (config.tenants !== undefined || config.entry !== undefined)
      this.gate = new EntryGate(config.tenants ?? [{ name: 'default', weight: 1 }], config.entry);
    if (toolWorld?.transport !== undefined && config.layers.some((l) => (l.tools?.length ?? 0) > 0))
      this.toolCalls = new ToolCalls(
        config,
        this.driver,
        toolWorld.transport,
        toolWorld.observer,
        random.split('tools'),
        clock,
        (root) => this.ownerOf(root),
        engineStores,
      );
    if (config.users !== undefined) {
      const o = toolWorld?.observer;
      this.users = new ImpatientUsers(
        config.users,
        scheduler,
        random.split('users'),
        (root, key, now) => this.submitRoot(root, key, now),
        (root, intended, ok, now) => this.rootSettled(root, intended, ok, now),
        (resubmit, impatient, now) => o?.userSubmit(resubmit, impatient, now),
      );
    }
  }

  private readonly deadlineMs: number;

  /** The engines of a layer (one per replica), for dashboards and per-second samples; undefined if it has none. */
  enginesOf(layer: number): EngineReplicas | undefined {
    return this.layers[layer].engines;
  }

  /** A root task arrives; `intendedStart` is when it was meant to (for coordinated omission). */
  startRoot(intendedStart: number, now: number): void {
    this.observer.rootOffered(now);
    const root = this.roots++;
    const key = this.shape.rootKey(root);
    this.counts.fill(0);
    this.shape.countLogical(0, key, this.counts);
    for (let l = 0; l < this.counts.length; l++) {
      this.observer.logicalCall(l, this.counts[l], now);
      this.toolCalls?.countLogical(l, this.counts[l]);
    }
    if (this.gate !== undefined) this.toolObserver?.tenantOffered(this.gate.tenantOf(key), now);
    if (this.users !== undefined) return this.users.arrive(root, key, intendedStart, now);
    this.enterRoot(root, key, intendedStart, intendedStart + this.deadlineMs, now);
  }

  /** A user's (re)submission of root task `root`: a new root call of the same intent, with a deadline of its own. */
  private submitRoot(root: number, key: number, now: number): void {
    this.enterRoot(root, key, now, now + this.deadlineMs, now);
  }

  /** A submission goes through the entry limit (refused with a retry-after hint) into the root layer. */
  private enterRoot(root: number, key: number, start: number, deadline: number, now: number): void {
    if (this.gate !== undefined) {
      const tenant = this.gate.tenantOf(key);
      const hint = this.gate.admit(tenant, this.gate.userOf(key, tenant), now);
      if (hint >= 0) {
        this.toolObserver?.entryRefused(tenant, hint, now);
        if (this.users !== undefined) {
          this.users.ended(root, false, now, hint);
          return;
        }
        this.observer.rootDone(start, now, false, now <= deadline);
        this.toolObserver?.tenantDone(tenant, false, now <= deadline, now);
        this.onRootDone?.(now);
        return;
      }
    }
    this.driver.start(0, -1, 0, key, root, deadline, start, now);
  }

  /** The tenant and user of root task `root` (by its key: the same for all its resubmissions), as names. */
  private ownerOf(root: number): ToolCallOwner {
    if (this.gate === undefined) return { tenant: 'default', user: 'u0' };
    const key = this.shape.rootKey(root);
    const tenant = this.gate.tenantOf(key);
    return { tenant: this.gate.tenants[tenant].name, user: `u${this.gate.userOf(key, tenant)}` };
  }

  /** The limit keys of a call at `layer` in root task `root` (`LIMIT_KEYS`). */
  private keysOf(root: number, layer: Layer): Record<string, string> {
    const { tenant, user } = this.ownerOf(root);
    return layer.leaf ? { tenant, user, model: layer.cfg.models?.[0] ?? '' } : { tenant, user };
  }

  /** The user's task is over (its first success, or its last failure). */
  private rootSettled(root: number, intendedStart: number, ok: boolean, now: number): void {
    const within = now <= intendedStart + this.deadlineMs;
    const partial = this.partialRoots.delete(root);
    this.observer.rootDone(intendedStart, now, ok, within, ok && partial);
    if (this.gate !== undefined)
      this.toolObserver?.tenantDone(this.gate.tenantOf(this.shape.rootKey(root)), ok, within, now);
    this.onRootDone?.(now);
  }

  // ---- CallKind: what a model call does where kinds differ ----

  opened(id: number): number {
    const c = this.calls;
    const layer = this.layers[c.layer[id]];
    if (!layer.leaf) return 0;
    c.prompt[id] = Math.max(1, Math.round(this.prompt()));
    c.completion[id] = Math.max(1, Math.round(this.completion()));
    if (layer.resume) this.resumes!.open(id);
    return c.prompt[id] + c.completion[id];
  }

  limitKeys(id: number): Record<string, string> {
    return this.keysOf(this.calls.root[id], this.layers[this.calls.layer[id]]);
  }

  attempted(id: number, isRetry: boolean, now: number): void {
    this.observer.attempt(this.calls.layer[id], now, isRetry);
  }

  dispatch(id: number, serial: number, timeout: number, now: number): void {
    const c = this.calls;
    const layerIx = c.layer[id];
    const layer = this.layers[layerIx];
    if (layer.leaf) {
      // The request id is the call id: a leaf call has one live request at a time, and the
      // upstream lets an id be reused as soon as its request was answered or cancelled.
      if (this.inference === undefined) return this.sendLeaf(id, now);
      if (layer.engines === undefined) c.target[id] = 0; // a fallback is per attempt
      return this.inference.admit(id, serial, now);
    }
    const n = this.shape.fanout(layerIx, c.key[id]);
    c.pending[id] = n;
    const childDeadline = Math.min(c.deadline[id], now + timeout);
    // Children may end synchronously (shed by their engine); the last one ends this attempt.
    const key = c.key[id];
    if (layer.cfg.sequential === true) {
      c.nextChild[id] = 1;
      this.driver.start(layerIx + 1, id, serial, childKey(key, 0), -1, childDeadline, now, now);
      return;
    }
    for (let i = 0; i < n; i++)
      this.driver.start(layerIx + 1, id, serial, childKey(key, i), -1, childDeadline, now, now);
  }

  /**
   * A sequential layer's attempt `serial` of call `id`: its next child, once the one before it
   * succeeded, within what is left of the attempt's time (its timeout from its start, its deadline).
   */
  private startNextChild(id: number, serial: number, now: number): void {
    const c = this.calls;
    const layerIx = c.layer[id];
    const i = c.nextChild[id]++;
    const deadline = Math.min(c.deadline[id], c.attemptStart[id] + this.layers[layerIx].cfg.timeoutMs);
    this.driver.start(layerIx + 1, id, serial, childKey(c.key[id], i), -1, deadline, now, now);
  }

  expired(what: number, id: number, timerKind: number, now: number): Classification | undefined {
    const c = this.calls;
    const layer = this.layers[c.layer[id]];
    // K_TIMEOUT and the stream guard's timers.
    if (what === K_IDLE && this.idleRearmed(id, timerKind, now)) return undefined;
    const cls =
      what === K_TIMEOUT
        ? TIMEOUT
        : ((what === K_IDLE && layer.resume && c.firstAt[id] >= 0 ? this.resumeBroken(id, 'stall', 0) : undefined) ??
          layer.stream!.abandon(what, c.firstAt[id], c.target[id]));
    if (cls === undefined) return undefined; // a first-token timer after the first token
    if (layer.leaf) {
      this.inference?.release(id, now);
      // Still queued for an inference slot: it never reached the upstream.
      if (c.reqId[id] >= 0) {
        this.transport.cancel(c.reqId[id], now);
        c.reqId[id] = -1;
        this.observer.upstreamResponse(layer.models[c.target[id]], STATUS_NO_ANSWER, 0, 0, now);
      }
    }
    return cls;
  }

  refused(id: number, reason: ShedReason, now: number): void {
    this.observer.shed(this.calls.layer[id], reason, now);
    this.driver.finish(id, Code.NoRetry, now);
  }

  failed(id: number, usedTokens: number, now: number): void {
    const c = this.calls;
    const layer = this.layers[c.layer[id]];
    const spent = layer.leaf ? usedTokens : c.tokens[id];
    if (spent > 0) this.observer.wasted(spent, now, layer.leaf ? layer.models[c.target[id]] : -1, c.layer[id]);
  }

  outOfBudget(id: number, partial: boolean, now: number): void {
    this.observer.outOfBudget?.(this.calls.layer[id], partial, now);
  }

  finished(id: number, ok: boolean, partial: boolean, now: number): void {
    const c = this.calls;
    const layerIx = c.layer[id];
    this.observer.callDone(layerIx, c.start[id], now, ok);
    const layer = this.layers[layerIx];
    if (ok && layer.stream !== undefined) {
      const first = layer.resume ? this.resumes!.firstToken(id, c.firstAt[id]) : c.firstAt[id];
      this.observer.streamDone?.(layerIx, first - c.start[id], now);
      if (layer.resume && this.resumes!.resumed(id)) this.observer.resumedSuccess?.(layerIx, now);
    }
    if (ok && c.truncated[id] === 1) this.observer.truncatedSuccess?.(layerIx, now);
    if (c.parent[id] < 0 && this.users === undefined) {
      this.observer.rootDone(c.start[id], now, ok, now <= c.deadline[id], partial);
      if (this.gate !== undefined)
        this.toolObserver?.tenantDone(this.gate.tenantOf(c.key[id]), ok, now <= c.deadline[id], now);
    }
  }

  rootEnded(root: number, ok: boolean, partial: boolean, degraded: boolean, now: number): void {
    if (partial && this.users !== undefined) this.partialRoots.add(root);
    const settled = this.users === undefined || this.users.ended(root, ok, now);
    if (!settled) this.partialRoots.delete(root);
    if (degraded && settled) this.toolObserver?.rootDegraded(now);
    if (this.users === undefined) this.onRootDone?.(now);
  }

  discarded(layer: number, tokens: number, now: number): void {
    this.observer.wasted(tokens, now, -1, layer - 1);
  }

  /** A streamed leaf request's first token or stall: the stream guard's timers, the TTFT. */
  onStream(reqId: number, event: number, ms: number, tokens: number, now: number): void {
    const c = this.calls;
    if (c.reqId[reqId] !== reqId || c.serial[reqId] === 0) return;
    const layer = this.layers[c.layer[reqId]];
    if (event === StreamEvent.Stall && layer.resume) this.resumes!.stall(reqId, tokens);
    const delay = layer.stream!.onEvent(event, ms, c, reqId, now);
    if (delay >= 0) this.driver.arm(now + delay, K_IDLE, reqId);
  }

  /**
   * The idle timer of call `id` fired and its transport is asked when the stream last moved
   * (live): true if it moved within `idleMs`, the timer re-armed for the rest of the gap.
   */
  private idleRearmed(id: number, kind: number, now: number): boolean {
    const t = this.transport;
    if (t.lastEventAt === undefined) return false;
    const due = this.layers[this.calls.layer[id]].stream!.idleDue(t.lastEventAt(id), this.calls.target[id], now);
    if (due < 0) return false;
    this.driver.rearm(due, kind, id);
    return true;
  }

  onResponse(reqId: number, status: number, detail: number, tokens: number, retryAfterMs: number, now: number): void {
    const id = reqId;
    const c = this.calls;
    const layer = this.layers[c.layer[id]];
    const model = layer.models[c.target[id]];
    this.observer.upstreamResponse(model, status, detail, tokens, now);
    if (c.reqId[id] !== reqId || c.serial[id] === 0) {
      if (tokens > 0) this.observer.wasted(tokens, now, model, c.layer[id]);
      return;
    }
    c.reqId[id] = -1;
    this.inference?.release(id, now);
    // A cut after commit that a declaring model is to continue: the caller keeps what it got.
    const delivered = layer.resume ? this.resumes!.delivered(id) : 0;
    if (layer.resume && status === 200 && detail === Detail.Cut && c.firstAt[id] >= 0) {
      const got = tokens - (c.prompt[id] + delivered);
      const broke = this.resumeBroken(id, 'cut', got);
      if (broke !== undefined) return this.driver.ended(id, codeOf(broke), broke, tokens - got, now);
    }
    const cls = layer.stream?.classify(status, detail, c, id, now) ?? classifyUpstream(status, detail, retryAfterMs);
    const code = codeOf(cls);
    // A resumed answer's usage: the continuation's (its prompt holds the prefill) and what came before it.
    if (code === Code.Ok) c.tokens[id] = tokens + delivered;
    this.driver.ended(id, code, cls, tokens, now);
  }

  /**
   * The committed stream of call `id` broke (`kind`) after `tokens` more completion tokens: the
   * retryable class its engine resumes on a declaring model, or undefined when it has no engine.
   */
  private resumeBroken(id: number, kind: 'cut' | 'stall', tokens: number): Classification | undefined {
    if (!this.driver.resume(id, StreamResume.classOf(kind))) return undefined;
    return this.resumes!.broke(id, kind, tokens, this.calls.firstAt[id]);
  }

  /** Sends the leaf attempt in flight of call `id` to its target model. */
  private sendLeaf(id: number, now: number): void {
    const c = this.calls;
    const layer = this.layers[c.layer[id]];
    const model = layer.models[c.target[id]];
    c.reqId[id] = id;
    this.observer.upstreamAttempt(model, now);
    if (layer.stream === undefined) {
      this.transport.submit(id, model, c.prompt[id], c.completion[id], now);
      return;
    }
    c.firstAt[id] = -1;
    // The attempt's timeout is the later bound; a first-token limit past it never fires first.
    const first = layer.stream.firstTokenMs(c.target[id]);
    const start = c.attemptStart[id];
    if (now + first < start + Math.min(layer.cfg.timeoutMs, c.deadline[id] - start))
      this.driver.arm(now + first, K_FIRST_TOKEN, id);
    // A resumption: the delivered tokens go back as a prefill, the rest of the completion is asked for.
    const d = layer.resume ? this.resumes!.delivered(id) : 0;
    if (d > 0)
      this.transport.submit(
        id,
        model,
        c.prompt[id] + d,
        Math.max(1, c.completion[id] - d),
        now,
        RequestFlag.Stream | RequestFlag.Prefill,
      );
    else this.transport.submit(id, model, c.prompt[id], c.completion[id], now, RequestFlag.Stream);
  }

  /** No inference slot in time: the attempt goes to the fallback model (degraded) or ends refused. */
  private inferenceGaveUp(id: number, fallback: boolean, now: number): void {
    const c = this.calls;
    if (fallback && this.fallbackTarget >= 0) {
      c.target[id] = this.fallbackTarget;
      c.degraded[id] = 1;
      return this.sendLeaf(id, now);
    }
    c.reqId[id] = -1;
    this.observer.shed(c.layer[id], 'queue_timeout', now);
    this.driver.ended(id, Code.NoRetry, CHILD_NO_RETRY, 0, now);
  }

  /**
   * A child of attempt `parentSerial` of `parent` ended with `code`. Pending counts the model
   * calls below down to 0; then the attempt's tool calls start (if its layer has any) and
   * pending counts them from −n up to 0; the last one ends the attempt.
   */
  childEnded(
    parent: number,
    parentSerial: number,
    code: number,
    tokens: number,
    degraded: boolean,
    truncated: number,
    partial: boolean,
    now: number,
  ): void {
    const c = this.calls;
    if (c.serial[parent] !== parentSerial) return;
    if (partial) c.partial[parent] = 1;
    c.tokens[parent] += tokens;
    c.truncated[parent] |= truncated;
    if (degraded) c.degraded[parent] = 1;
    if (code !== Code.Ok && (c.failCode[parent] === Code.Ok || code === Code.NoRetry))
      c.failCode[parent] = code === Code.NoRetry ? Code.NoRetry : Code.Retryable;
    const pcode = c.failCode[parent];
    if (c.pending[parent] > 0) {
      if (--c.pending[parent] > 0) {
        if (this.layers[c.layer[parent]].cfg.sequential !== true) return;
        // One after another: the next child once this one succeeded; a failure ends the attempt.
        if (pcode === Code.Ok) return this.startNextChild(parent, parentSerial, now);
        c.pending[parent] = 0;
        return this.driver.ended(parent, pcode, classifyCode(pcode), -1, now);
      }
      if (pcode === Code.Ok && this.startTools(parent, parentSerial, now)) return;
    } else if (++c.pending[parent] < 0) return;
    this.driver.ended(parent, pcode, classifyCode(pcode), -1, now);
  }

  /** Starts the tool calls of attempt `serial` of call `id`; false if its layer makes none. */
  private startTools(id: number, serial: number, now: number): boolean {
    const c = this.calls;
    const layerIx = c.layer[id];
    const n = this.toolCalls?.perAttempt(layerIx) ?? 0;
    if (n === 0) return false;
    c.pending[id] = -n;
    const deadline = Math.min(c.deadline[id], c.attemptStart[id] + this.layers[layerIx].cfg.timeoutMs);
    this.toolCalls!.start(layerIx, id, serial, c.key[id], deadline, now);
    return true;
  }
}
