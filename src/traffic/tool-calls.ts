import type { Classification } from '../engine/classify.js';
import type { Clock } from '../engine/clock.js';
import type { ShedReason } from '../engine/errors.js';
import { idempotencyKey } from '../engine/idempotency-key.js';
import type { SeededRandom } from '../engine/random.js';
import type { ToolListener } from '../upstream/tool-service.js';
import type { CallTable } from './call-table.js';
import type { CallDriver, CallKind } from './call-driver.js';
import type { TrafficConfig } from './config.js';
import { keyedLimits, resolveEngine } from './engine-guard.js';
import { EngineReplicas } from './engine-replicas.js';
import { Code, TIMEOUT, classifyUpstream, codeOf } from './outcomes.js';
import { plainPolicy } from './retry-policy.js';
import { childKey, mix32 } from './shape.js';
import type { ToolCallConfig } from './tool-call-config.js';
import { ToolOutcome, type ToolObserver, type ToolTransport } from './tool-observer.js';

/** Tool calls' node keys are offset from model calls' so the two never share an intent. */
const TOOL_SALT = 0x5bd1e995;

/** One tool call entry of one layer, resolved. */
interface Entry {
  cfg: ToolCallConfig;
  /** Index of the tool in the service. */
  tool: number;
  engines: EngineReplicas | undefined;
  /** Its requests carry an idempotency key bound to the intent. */
  keyed: boolean;
  /** Its call site in the driver. */
  site: number;
}

/** Whose root task a tool call belongs to: the first two parts of its intent's idempotency key. */
export interface ToolCallOwner {
  tenant: string;
  user: string;
}

/**
 * The tool-call leaves of the call tree: the `CallKind` of tool calls. A layer's attempt, once
 * its model calls below have succeeded, starts its tool calls; each is driven by the same
 * `CallDriver` as model calls (under its own policy, the layer's unless it names one; its own
 * stage's budget when it names a stage; the deadline its parent's attempt hands down) and ends by handing its outcome
 * to the parent's attempt. A call's intent is bound to its place in its root task's tree, so a
 * parent's re-run, a retry and a user's resubmission all repeat the same intent — and every
 * execution of its effect beyond the first is a duplicate the tool service counts. Calls under
 * the engine carry the intent as an idempotency key (`tenant:user:action:resource:version`).
 */
export class ToolCalls implements CallKind, ToolListener {
  private readonly calls: CallTable;
  /** Per layer: its entries' indexes. */
  private readonly byLayer: number[][];
  private readonly entries: Entry[] = [];
  /** Per driver site at or past `firstSite`: its entry (site − firstSite). */
  private readonly firstSite: number;

  constructor(
    config: TrafficConfig,
    private readonly driver: CallDriver,
    private readonly transport: ToolTransport,
    private readonly observer: ToolObserver,
    random: SeededRandom,
    clock: Clock,
    private readonly ownerOf: (root: number) => ToolCallOwner,
  ) {
    this.calls = driver.calls;
    let first = -1;
    this.byLayer = config.layers.map((layer) =>
      (layer.tools ?? []).map((cfg, j) => {
        const retry = cfg.retry ?? layer.retry;
        const r = random.split(`tools:${layer.name}:${j}`);
        const tool = transport.toolIndex(cfg.tool);
        if (tool < 0) throw new RangeError(`unknown tool ${JSON.stringify(cfg.tool)}`);
        const engines =
          retry.policy === 'engine'
            ? new EngineReplicas(config.engine, retry.engine, 1, `${layer.name}.${cfg.tool}`, [cfg.tool], clock, r)
            : undefined;
        const keyed = cfg.idempotency ?? retry.policy === 'engine';
        const limitKeys = retry.policy === 'engine' && keyedLimits(resolveEngine(config.engine, retry.engine));
        const site = driver.addSite({
          plain: plainPolicy(retry, r.split('policy')),
          engines,
          timeoutMs: cfg.timeoutMs,
          budget: cfg.stage === undefined ? Infinity : (config.stages?.[cfg.stage] ?? Infinity),
          partial: false,
          keyed: limitKeys,
          kind: this,
        });
        if (first < 0) first = site;
        this.entries.push({ cfg, tool, engines, keyed, site });
        return this.entries.length - 1;
      }),
    );
    this.firstSite = first;
  }

  private entryOf(id: number): Entry {
    return this.entries[this.calls.layer[id] - this.firstSite];
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

  /** Starts the tool calls of the attempt `parentSerial` of call `parent` (node `key`), ending by `deadline`. */
  start(layer: number, parent: number, parentSerial: number, key: number, deadline: number, now: number): void {
    let i = 0;
    for (const e of this.byLayer[layer]) {
      const site = this.entries[e].site;
      for (let k = 0; k < this.entries[e].cfg.calls; k++, i++)
        this.driver.start(site, parent, parentSerial, childKey(key ^ TOOL_SALT, i), -1, deadline, now, now);
    }
  }

  onToolResponse(reqId: number, serial: number, status: number, retryAfterMs: number, now: number): void {
    const c = this.calls;
    if (c.serial[reqId] !== serial) return; // an answer to an attempt its caller gave up on
    this.observer.toolAnswer(this.entryOf(reqId).tool, status, now);
    const cls = classifyUpstream(status, 0, retryAfterMs);
    this.driver.ended(reqId, codeOf(cls), cls, 0, now);
  }

  // ---- CallKind: what a tool call does where kinds differ ----

  opened(): number {
    return 0;
  }

  limitKeys(id: number): Record<string, string> {
    return { ...this.ownerOf(this.calls.root[id]), tool: this.entryOf(id).cfg.tool };
  }

  attempted(id: number, isRetry: boolean, now: number): void {
    this.observer.toolAttempt(this.entryOf(id).tool, isRetry, now);
  }

  dispatch(id: number, serial: number, _timeoutMs: number, now: number): void {
    const c = this.calls;
    const entry = this.entryOf(id);
    const intent = entry.cfg.sideEffect ? intentOf(c.root[id], c.key[id]) : -1;
    const key = entry.keyed ? keyOf(this.ownerOf(c.root[id]), entry.cfg.tool, c.root[id], c.key[id]) : '';
    this.transport.submit(id, serial, entry.tool, intent, key, now);
  }

  expired(_what: number, id: number, _timerKind: number, now: number): Classification {
    this.observer.toolAnswer(this.entryOf(id).tool, -1, now);
    return TIMEOUT;
  }

  /** Call `id`'s engine refused it: it fails, or answers in its lesser way (`degrade`). */
  refused(id: number, reason: ShedReason, now: number): void {
    const entry = this.entryOf(id);
    this.observer.toolShed(entry.tool, reason, now);
    if (entry.cfg.degrade === 'fail') return this.driver.finish(id, Code.NoRetry, now);
    this.calls.degraded[id] = 1;
    this.driver.finish(id, Code.Ok, now);
  }

  failed(): void {}

  outOfBudget(): void {}

  finished(id: number, ok: boolean, _partial: boolean, now: number): void {
    const c = this.calls;
    const outcome = !ok ? ToolOutcome.Failed : c.degraded[id] === 1 ? ToolOutcome.Degraded : ToolOutcome.Ok;
    this.observer.toolDone(this.entryOf(id).tool, c.start[id], now, outcome);
  }

  rootEnded(): void {
    throw new Error('a tool call is never a root call');
  }

  discarded(): void {}

  childEnded(): void {
    throw new Error('a tool call has no calls below it');
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
