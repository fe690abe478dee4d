import type { Clock } from '../engine/clock.js';
import type { ShedReason } from '../engine/errors.js';
import { Step, type GuardCall } from '../engine/guard-call.js';
import { idempotencyKey } from '../engine/idempotency-key.js';
import type { SeededRandom } from '../engine/random.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import type { ToolListener } from '../upstream/tool-service.js';
import { CallTable } from './call-table.js';
import type { TrafficConfig } from './config.js';
import { keyedLimits, resolveEngine } from './engine-guard.js';
import { EngineReplicas, type EngineStores } from './engine-replicas.js';
import { EngineSlots } from './engine-slots.js';
import { Code, TIMEOUT, classifyUpstream, codeOf } from './outcomes.js';
import { plainPolicy, type PlainPolicy } from './retry-policy.js';
import { childKey, mix32 } from './shape.js';
import type { ToolCallConfig } from './tool-call-config.js';
import { ToolOutcome, type ToolObserver, type ToolTransport } from './tool-observer.js';

const K_RETRY = 1;
const K_TIMEOUT = 2;
const SERIAL_SHIFT = 4;
const SERIAL_MASK = 0x7ffffff;
/** Tool calls' node keys are offset from model calls' so the two never share an intent. */
const TOOL_SALT = 0x5bd1e995;

/** One tool call entry of one layer, resolved. */
interface Entry {
  cfg: ToolCallConfig;
  /** Index of the tool in the service. */
  tool: number;
  plain: PlainPolicy | undefined;
  engines: EngineReplicas | undefined;
  keyed: boolean;
  /** Its engine's limits pick buckets by key: its calls carry their tenant, user and tool. */
  limitKeys: boolean;
}

/** Called when a tool call ends: the parent's attempt (by serial) and how it went (`Code`, degraded). */
/** Whose root task a tool call belongs to: the first two parts of its intent's idempotency key. */
export interface ToolCallOwner {
  tenant: string;
  user: string;
}

export type ToolCallDone = (parent: number, parentSerial: number, code: number, degraded: boolean, now: number) => void;

/**
 * The tool-call leaves of the call tree. A layer's attempt, once its model calls below have
 * succeeded, starts its tool calls; each retries under its own policy (the layer's unless it
 * names one) and ends by handing its outcome to the parent's attempt. A call's intent is bound
 * to its place in its root task's tree, so a parent's re-run, a retry and a user's
 * resubmission all repeat the same intent — and every execution of its effect beyond the first
 * is a duplicate the tool service counts. Calls under the engine carry the intent as an
 * idempotency key (`tenant:user:action:resource:version`).
 */
export class ToolCalls implements EventHandler, ToolListener {
  private readonly calls = new CallTable();
  /** Per layer: its entries' indexes. */
  private readonly byLayer: number[][];
  private readonly entries: Entry[] = [];
  private readonly guardCalls: Array<GuardCall | undefined> = [];
  private readonly handlerId: number;
  private nextSerial = 1;
  /** The engines' concurrency slots, when a tool call's engine limits its concurrency. */
  private readonly slots: EngineSlots | undefined;

  constructor(
    config: TrafficConfig,
    private readonly scheduler: Scheduler,
    private readonly transport: ToolTransport,
    private readonly observer: ToolObserver,
    random: SeededRandom,
    clock: Clock,
    private readonly done: ToolCallDone,
    private readonly ownerOf: (root: number) => ToolCallOwner,
    engineStores?: EngineStores,
  ) {
    this.byLayer = config.layers.map((layer) =>
      (layer.tools ?? []).map((cfg, j) => {
        const retry = cfg.retry ?? layer.retry;
        const r = random.split(`tools:${layer.name}:${j}`);
        const tool = transport.toolIndex(cfg.tool);
        if (tool < 0) throw new RangeError(`unknown tool ${JSON.stringify(cfg.tool)}`);
        const engines =
          retry.policy === 'engine'
            ? new EngineReplicas(
                config.engine,
                retry.engine,
                1,
                `${layer.name}.${cfg.tool}`,
                [cfg.tool],
                clock,
                r,
                engineStores,
              )
            : undefined;
        const keyed = cfg.idempotency ?? retry.policy === 'engine';
        const limitKeys = retry.policy === 'engine' && keyedLimits(resolveEngine(config.engine, retry.engine));
        this.entries.push({ cfg, tool, plain: plainPolicy(retry, r.split('policy')), engines, keyed, limitKeys });
        return this.entries.length - 1;
      }),
    );
    this.handlerId = scheduler.register(this);
    if (this.entries.some((e) => e.engines?.guards[0].concurrency !== undefined))
      this.slots = new EngineSlots(scheduler, {
        granted: (id, now) => this.attempt(id, now),
        refused: (id, reason, now) => this.refused(id, reason, now),
      });
  }

  /** Each tool's breaker state (the worst over the layers calling it under the engine), by tool index. */
  breakerStates(now: number): Map<number, string> {
    const rank = ['closed', 'half_open', 'open'];
    const out = new Map<number, string>();
    for (const e of this.entries) {
      const state = e.engines?.guards[0].snapshot(now).targets[0]?.breaker?.state;
      if (state === undefined) continue;
      const was = out.get(e.tool);
      if (was === undefined || rank.indexOf(state) > rank.indexOf(was)) out.set(e.tool, state);
    }
    return out;
  }

  /** Tool calls one attempt of a call at `layer` makes. */
  perAttempt(layer: number): number {
    let n = 0;
    for (const e of this.byLayer[layer]) n += this.entries[e].cfg.calls;
    return n;
  }

  /** Counts the logical tool calls of `calls` logical calls at `layer`. */
  countLogical(layer: number, calls: number): void {
    for (const e of this.byLayer[layer])
      this.observer.toolLogical(this.entries[e].tool, calls * this.entries[e].cfg.calls);
  }

  /** Starts the tool calls of the attempt `parentSerial` of call `parent` (node `key` of root `root`). */
  start(
    layer: number,
    parent: number,
    parentSerial: number,
    key: number,
    root: number,
    deadline: number,
    now: number,
  ): void {
    let i = 0;
    for (const e of this.byLayer[layer]) {
      for (let k = 0; k < this.entries[e].cfg.calls; k++, i++)
        this.startCall(e, parent, parentSerial, childKey(key ^ TOOL_SALT, i), root, deadline, now);
    }
  }

  handle(kind: number, id: number, now: number): void {
    const c = this.calls;
    if (kind === K_RETRY) return this.attempt(id, now);
    if (c.serial[id] === 0 || (c.serial[id] & SERIAL_MASK) !== kind >>> SERIAL_SHIFT) return;
    this.observer.toolAnswer(this.entries[c.layer[id]].tool, -1, now);
    this.attemptEnded(id, Code.Timeout, TIMEOUT, now);
  }

  onToolResponse(reqId: number, serial: number, status: number, retryAfterMs: number, now: number): void {
    const c = this.calls;
    if (c.serial[reqId] !== serial) return; // an answer to an attempt its caller gave up on
    this.observer.toolAnswer(this.entries[c.layer[reqId]].tool, status, now);
    const cls = classifyUpstream(status, 0, retryAfterMs);
    this.attemptEnded(reqId, codeOf(cls), cls, now);
  }

  private startCall(
    e: number,
    parent: number,
    parentSerial: number,
    key: number,
    root: number,
    deadline: number,
    now: number,
  ): void {
    const c = this.calls;
    const id = c.alloc();
    if (id >= this.guardCalls.length) this.guardCalls.length = c.layer.length;
    c.layer[id] = e;
    c.parent[id] = parent;
    c.parentSerial[id] = parentSerial;
    c.key[id] = key;
    c.root[id] = root;
    c.attempts[id] = 0;
    c.start[id] = now;
    c.deadline[id] = deadline;
    const entry = this.entries[e];
    if (entry.engines !== undefined) {
      const guard = entry.engines.pick();
      this.slots?.bind(id, guard.concurrency);
      const keys = entry.limitKeys ? { ...this.ownerOf(root), tool: entry.cfg.tool } : undefined;
      this.guardCalls[id] = guard.start(now, { deadlineAt: deadline, keys });
    }
    this.attempt(id, now);
  }

  private attempt(id: number, now: number): void {
    const c = this.calls;
    const entry = this.entries[c.layer[id]];
    const gc = this.guardCalls[id];
    let timeout = entry.cfg.timeoutMs;
    let isRetry: boolean;
    if (gc !== undefined) {
      // A concurrency slot first, as guard.run takes one before asking the call's next step.
      if (this.slots !== undefined && !this.slots.take(id, now)) return;
      if (gc.next(now) !== Step.Attempt) return this.refused(id, gc.shedReason!, now);
      isRetry = gc.attempts > 1;
      timeout = Math.min(timeout, c.deadline[id] - now);
    } else isRetry = c.attempts[id] > 0;
    c.attempts[id]++;
    this.observer.toolAttempt(entry.tool, isRetry, now);
    const serial = this.nextSerial;
    this.nextSerial = serial === SERIAL_MASK ? 1 : serial + 1;
    c.serial[id] = serial;
    c.attemptStart[id] = now;
    if (timeout !== Infinity)
      this.scheduler.schedule(now + timeout, this.handlerId, K_TIMEOUT | (serial << SERIAL_SHIFT), id);
    const intent = entry.cfg.sideEffect ? intentOf(c.root[id], c.key[id]) : -1;
    const key = entry.keyed ? keyOf(this.ownerOf(c.root[id]), entry.cfg.tool, c.root[id], c.key[id]) : '';
    this.transport.submit(id, serial, entry.tool, intent, key, now);
  }

  private attemptEnded(id: number, code: number, cls: ReturnType<typeof classifyUpstream>, now: number): void {
    const c = this.calls;
    c.serial[id] = 0;
    this.slots?.release(id, now);
    const entry = this.entries[c.layer[id]];
    const gc = this.guardCalls[id];
    let delay: number;
    if (gc !== undefined) {
      const step = gc.complete(cls, now - c.attemptStart[id], 0, now);
      if (step === Step.Done) return this.finish(id, ToolOutcome.Ok, now);
      if (step === Step.Shed) return this.refused(id, gc.shedReason!, now);
      if (step === Step.Fail) return this.finish(id, ToolOutcome.Failed, now);
      delay = gc.delayMs;
    } else {
      if (code === Code.Ok) return this.finish(id, ToolOutcome.Ok, now);
      delay = entry.plain!.delayAfter(c.attempts[id], cls);
      if (delay < 0) return this.finish(id, ToolOutcome.Failed, now);
    }
    this.scheduler.schedule(now + delay, this.handlerId, K_RETRY, id);
  }

  /** Call `id`'s engine refused it: it fails, or answers in its lesser way (`degrade`). */
  private refused(id: number, reason: ShedReason, now: number): void {
    const entry = this.entries[this.calls.layer[id]];
    this.observer.toolShed(entry.tool, reason, now);
    this.finish(id, entry.cfg.degrade === 'fail' ? ToolOutcome.Failed : ToolOutcome.Degraded, now);
  }

  private finish(id: number, outcome: number, now: number): void {
    const c = this.calls;
    this.slots?.release(id, now);
    this.observer.toolDone(this.entries[c.layer[id]].tool, c.start[id], now, outcome);
    const parent = c.parent[id];
    const parentSerial = c.parentSerial[id];
    this.guardCalls[id] = undefined;
    c.release(id);
    this.done(
      parent,
      parentSerial,
      outcome === ToolOutcome.Failed ? Code.Retryable : Code.Ok,
      outcome === ToolOutcome.Degraded,
      now,
    );
  }
}

/**
 * The intent as a number for counting: the root task's number above the node's 32-bit key
 * (exact while fewer than 2^21 root tasks arrive).
 */
function intentOf(root: number, key: number): number {
  return root * 4294967296 + (key >>> 0);
}

/**
 * The intent as an idempotency key: the root task's tenant and user, the root task and the tree
 * node as the resource (a user's tasks are distinct intents; its resubmissions of one are not).
 */
function keyOf(owner: ToolCallOwner, tool: string, root: number, key: number): string {
  return idempotencyKey({
    tenant: owner.tenant,
    user: owner.user,
    action: tool,
    resource: `r${root}.${(mix32(key) >>> 0).toString(36)}`,
    version: 1,
  });
}
