import type { Dist } from '../upstream/distribution.js';
import type { Range } from '../engine/options.js';
import type { RetryPolicy } from './config.js';

/**
 * What a tool call does when its own engine refuses it (the tool's breaker is open, its limit
 * is spent): `fail`, or answer in a lesser way that still lets the task finish — a draft
 * instead of the send, a read-only answer, or the effect deferred to later. A degraded call is
 * a success to its parent, counted apart from full successes.
 */
export type ToolDegrade = 'fail' | 'draft' | 'read-only' | 'defer';

/** A tool call a layer's attempts make after their model calls: a leaf of kind `tool`. */
export interface ToolCallConfig {
  /** The tool service's tool it calls (`gmail.send`). */
  tool: string;
  /** Whether it changes the world: its executions are then counted per intent, and repeats are duplicates. */
  sideEffect: boolean;
  /** Calls of it each attempt makes (each its own intent). @default 1 */
  calls: number;
  /** Per-attempt timeout, ms. @default Infinity */
  timeoutMs: number;
  /** Who retries it. @default the layer's policy */
  retry?: RetryPolicy;
  /** Whether its requests carry an idempotency key bound to the intent. @default true when its policy is `engine` */
  idempotency?: boolean;
  /** What it does when its engine refuses it. @default 'fail' */
  degrade: ToolDegrade;
  /** The stage (a name in `TrafficConfig.stages`) whose budget each call of it spends, retries and waits included; out of it, the call fails. */
  stage?: string;
}

/**
 * The users behind root tasks: impatient ones resubmit the same request (the same intent) when
 * it has not answered after their patience, or after it failed — double-click and refresh.
 * Every resubmission is a new root attempt of the same intent: the tree runs again below it.
 */
export interface UsersConfig {
  /** How long a user waits for an answer before resubmitting. @default Infinity (they wait) */
  patienceMs: Dist;
  /** Share of failed submissions the user resubmits. @default 0 */
  onError: number;
  /** Wait before resubmitting after a failure. @default 1000 */
  errorDelayMs: Dist;
  /** Resubmissions of one task at most. @default 2 */
  maxResubmits: number;
  /** Whether a user refused at entry waits the retry-after hint (else its own `errorDelayMs`). @default true */
  honourRetryAfter: boolean;
}

export const USERS_DEFAULTS = {
  patienceMs: Infinity,
  onError: 0,
  errorDelayMs: 1000,
  maxResubmits: 2,
  honourRetryAfter: true,
} as const;

/**
 * A tenant root tasks belong to, drawn by `weight` (one tenant flooding is one with a large
 * weight). Its root tasks are spread over its `users`, each task's user drawn from its key.
 */
export interface TenantConfig {
  name: string;
  weight: number;
  /** Users (API keys, people) the tenant's root tasks come from. @default 1 */
  users?: number;
}

/**
 * A tenant is one user unless it says otherwise: one client behind one key, so an entry limit
 * `per: user` is the same as `per: tenant` until a scenario names more users.
 */
export const TENANT_DEFAULT_USERS = 1;

/** A tenant's users: whole, and few enough that every user of every tenant has an exact number. */
export const TENANT_USERS_RANGE: Range = { min: 1, max: 1_000_000_000, integer: true };

/** Whom the entry limit's token bucket is for: each tenant, or each user of each tenant. */
export type EntryPer = 'tenant' | 'user';

export const ENTRY_DEFAULT_PER: EntryPer = 'tenant';

/** The entry limit: a token bucket per tenant (or per user) in front of the root layer. */
export interface EntryConfig {
  /** Submissions per second each tenant (or user) may make. */
  rps: number;
  /** The bucket's size: a burst of this many goes through at once. @default rps */
  burst: number;
  /** Whom each bucket is for. @default 'tenant' */
  per: EntryPer;
}

/** The inference limit of the last layer: a concurrency limit and a bounded queue in front of the model. */
export interface InferenceConfig {
  /** Model attempts in flight at once. */
  maxInFlight: number;
  /** Attempts waiting for a slot; past it they are refused at once. @default 256 */
  maxQueue: number;
  /** Longest an attempt waits for a slot. @default 10_000 */
  maxWaitMs: number;
  /** A smaller model (one of the layer's `models`) the attempt goes to instead when it gets no slot in time: a degraded answer. */
  fallback?: string;
}
