import type { ShedReason } from '../../engine/errors.js';
import type { Percentiles } from './result.js';

/** One tool's figures in a result (`tools` in `stormlab.result/v1`, present when a scenario has tool calls). */
export interface ToolResult {
  name: string;
  /** Whether its calls change the world (duplicates are counted for these). */
  sideEffect: boolean;
  /** Calls the tree would make if everything succeeded first time. */
  logicalCalls: number;
  attempts: number;
  retries: number;
  /** attempts ÷ logicalCalls. */
  amplification: number;
  /** Times the tool service did its effect (the service's count; answered or not). */
  executions: number;
  /** Distinct intents done at least once (side-effect tools). */
  intents: number;
  /** Executions beyond the first of their intent: emails sent twice, tickets opened twice. */
  duplicates: number;
  /** Attempts that found their idempotency key `in_progress` (another attempt was doing the effect). */
  conflicts: number;
  /** Keyed attempts answered with the stored receipt: the effect was not done again. */
  replays: number;
  /** Tool calls by how they ended: ok, degraded (a draft, read-only or deferred instead), failed. */
  ok: number;
  degraded: number;
  failed: number;
  /** failed ÷ calls ended. */
  failureRate: number;
  /** degraded ÷ calls ended. */
  degradedShare: number;
  /** Shares of attempts answered 429, 409 (conflict), 5xx, or not in time. */
  share: { '429': number; '409': number; '5xx': number; timeout: number };
  /** Calls refused by their engine (breaker, limit, budget), by reason; only non-zero reasons appear. */
  shed: Partial<Record<ShedReason, number>>;
  /** From the call's start to its end, all attempts included. */
  latencyMs: Percentiles;
}

/** The users behind the root tasks, as their own layer of amplification (`users` in a result, when a scenario has them). */
export interface UsersResult {
  /** Root tasks (intents). */
  tasks: number;
  /** Submissions: the first of each task and every resubmission. */
  submissions: number;
  resubmits: number;
  /** Resubmissions because the task had not answered within the user's patience. */
  impatient: number;
  /** Resubmissions after a failure. */
  afterError: number;
  /** submissions ÷ tasks. */
  amplification: number;
}

/** One tenant's root tasks (`tenants` in a result, when a scenario names tenants or an entry limit). */
export interface TenantResult {
  name: string;
  offered: number;
  /** Completed ok within their deadline. */
  ok: number;
  late: number;
  failed: number;
  /** Submissions refused at entry (each with a retry-after hint). */
  refused: number;
  /** ok per second of the run. */
  goodput: number;
  /** ok ÷ offered. */
  successRate: number;
}

/** The last layer's inference queue (`inference` in a result, when the scenario limits inference). */
export interface InferenceResult {
  /** Model attempts that found every slot taken and joined the queue. */
  queued: number;
  /** Of those, the ones that got no slot in time (or found the queue full). */
  gaveUp: number;
  /** Of those, the ones sent to the fallback model instead (degraded answers). */
  fallbacks: number;
  /** The wait each queued attempt was told to expect: its mean and the largest. */
  estimatedWaitMs: { mean: number; max: number };
}
