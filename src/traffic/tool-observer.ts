import type { ShedReason } from '../engine/errors.js';
import type { InferenceObserver } from './inference-gate.js';

/** How a tool call ended, as its parent and the metrics see it. */
export const ToolOutcome = { Ok: 0, Failed: 1, Degraded: 2 } as const;

/**
 * What the traffic interpreter reports about tool calls and users. Tools are addressed by
 * their index in the tool service; times are ms since the start of the run.
 */
export interface ToolObserver extends InferenceObserver {
  /** `n` logical calls of `tool` (the calls a root task makes if everything succeeds first time). */
  toolLogical(tool: number, n: number): void;
  toolAttempt(tool: number, isRetry: boolean, t: number): void;
  /** The service's answer to an attempt: an HTTP status, or −1 when none came in time. */
  toolAnswer(tool: number, status: number, t: number): void;
  /** A tool call finished after all its attempts (`ToolOutcome`). */
  toolDone(tool: number, intendedStart: number, t: number, outcome: number): void;
  toolShed(tool: number, reason: ShedReason, t: number): void;
  /** A root task ended ok, but with a tool call below it degraded (a draft instead of the send): a degraded success. */
  rootDegraded(t: number): void;
  /** A root task of `tenant` arrived (tenants by index in the scenario's list). */
  tenantOffered(tenant: number, t: number): void;
  /** A root task of `tenant` is over (as `rootDone`). */
  tenantDone(tenant: number, ok: boolean, withinDeadline: boolean, t: number): void;
  /** A submission of `tenant` was refused at entry, with a retry-after hint. */
  entryRefused(tenant: number, retryAfterMs: number, t: number): void;
  /** A root task's user submitted it; `resubmit` for the second and later time (`impatient`: it had not answered yet). */
  userSubmit(resubmit: boolean, impatient: boolean, t: number): void;
}

/** How tool attempts reach a tool service: the simulated one, or HTTP in live mode. */
export interface ToolTransport {
  toolIndex(name: string): number;
  /** `intent` is the effect's business intent (−1: nothing to count); `key` the idempotency key ('' for none). */
  submit(reqId: number, serial: number, tool: number, intent: number, key: string, now: number): void;
}
