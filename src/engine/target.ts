import { OptionError } from './errors.js';
import { checkInteger, checkNonEmptyString, checkNumber } from './options.js';

/**
 * One entry of a guard's fallback chain, as the caller writes it. A target is an origin, a
 * model, or both: `{ name: 'mini', model: 'gpt-4o-mini' }` falls back to another model on the
 * same provider, `{ name: 'b', origin: 'https://b.example' }` to another provider.
 *
 * The engine itself never sends anything: it hands the chosen `Target` to the attempt
 * function (`ctx.target`), which uses `origin`, `model` and `rewrite` to shape the request.
 */
export interface TargetSpec {
  /** Unique within the chain: what events, snapshots and results call it. */
  name: string;
  /** Base URL (scheme://host[:port]) the attempt goes to. @default the request's own */
  origin?: string;
  /** Model id the attempt asks for (the request's `model` is rewritten). @default the request's own */
  model?: string;
  /**
   * Context window in tokens. A context-length error moves the call only to a later target
   * with a larger window (targets with a smaller, equal or unknown one are skipped).
   * @default unknown
   */
  contextWindow?: number;
  /**
   * Shapes the request for this target beyond origin and model (another provider's body,
   * headers). The engine only carries it; integrations call it with their own request type.
   */
  rewrite?(request: unknown, target: Target): unknown;
  /**
   * This target's stream limits, over the stream guard's (each optional): a reasoning model
   * that thinks before it speaks gets a long first-token wait, a chat fallback behind it a
   * short one. The integrations read it (the engine itself only carries it).
   * @default the guard's `stream` limits
   */
  stream?: TargetStreamLimits;
  /**
   * Whether the target continues an answer given its start as a trailing assistant message
   * (`prefill`). Only a declaring target is asked for the rest of a committed stream that
   * broke (`stream.resume`); the others are never sent a prefill. @default none
   */
  continuation?: 'prefill';
}

/** The stream limits a target may set for itself, in ms (each above 0; Infinity: none). */
export interface TargetStreamLimits {
  /** Longest wait for a streamed answer's headers. */
  headersTimeoutMs?: number;
  /** Longest time from the attempt's start to the first content delta. */
  firstTokenMs?: number;
  /** Longest quiet after the first content delta. */
  idleMs?: number;
}

const TARGET_STREAM_KEYS = ['headersTimeoutMs', 'firstTokenMs', 'idleMs'] as const;

/** What `GuardOptions.targets` takes: a bare name (as before) or a full spec. */
export type TargetOption = string | TargetSpec;

/** A target as the guard resolved it: every field present, plus its place and state key. */
export interface Target {
  readonly name: string;
  /** Position in the fallback chain; 0 is the primary. */
  readonly index: number;
  readonly origin: string | undefined;
  readonly model: string | undefined;
  readonly contextWindow: number | undefined;
  readonly rewrite: TargetSpec['rewrite'] | undefined;
  /** Its own stream limits (undefined: the guard's). */
  readonly stream: Readonly<TargetStreamLimits> | undefined;
  /** `prefill`: the target continues a prefilled answer (`TargetSpec.continuation`). */
  readonly continuation: 'prefill' | undefined;
  /**
   * What the target's breaker and throttle are keyed by: `origin|model` when either is given
   * (two names for the same origin and model share one state, as they share one upstream),
   * else the name. A failure on one model never sheds calls to another.
   */
  readonly key: string;
}

/** Checks the chain and resolves each entry; bare strings become `{ name }`. */
export function resolveTargets(targets: readonly TargetOption[], path = 'guard.targets'): Target[] {
  if (!Array.isArray(targets) || targets.length === 0)
    throw new OptionError(`${path} must be a non-empty array of names or targets, got ${show(targets)}`, path);
  const seen = new Set<string>();
  return targets.map((t, index) => {
    const at = `${path}[${index}]`;
    const spec: TargetSpec = typeof t === 'string' ? { name: t } : t;
    if (spec === null || typeof spec !== 'object')
      throw new OptionError(`${at} must be a name or a target like { name, model }, got ${show(t)}`, at);
    const name = checkNonEmptyString(typeof t === 'string' ? at : `${at}.name`, spec.name);
    if (seen.has(name))
      throw new OptionError(`${path} must not repeat a name, got ${JSON.stringify(name)} twice`, path);
    seen.add(name);
    if (spec.origin !== undefined) checkNonEmptyString(`${at}.origin`, spec.origin);
    if (spec.model !== undefined) checkNonEmptyString(`${at}.model`, spec.model);
    if (spec.contextWindow !== undefined) checkInteger(`${at}.contextWindow`, spec.contextWindow, 1);
    if (spec.continuation !== undefined && spec.continuation !== 'prefill')
      throw new OptionError(
        `${at}.continuation must be prefill (or absent), got ${show(spec.continuation)}`,
        `${at}.continuation`,
      );
    if (spec.rewrite !== undefined && typeof spec.rewrite !== 'function')
      throw new OptionError(`${at}.rewrite must be a function, got ${typeof spec.rewrite}`, `${at}.rewrite`);
    const stream = checkStream(`${at}.stream`, spec.stream);
    const origin = spec.origin;
    const model = spec.model;
    return Object.freeze({
      name,
      index,
      origin,
      model,
      contextWindow: spec.contextWindow,
      rewrite: spec.rewrite,
      stream,
      continuation: spec.continuation,
      key: origin === undefined && model === undefined ? name : `${origin ?? ''}|${model ?? ''}`,
    });
  });
}

/** A target's `stream` limits, checked and frozen: known keys only, each a number above 0. */
function checkStream(at: string, s: TargetStreamLimits | undefined): Readonly<TargetStreamLimits> | undefined {
  if (s === undefined) return undefined;
  if (s === null || typeof s !== 'object' || Array.isArray(s))
    throw new OptionError(`${at} must be a mapping like { firstTokenMs: 120000 }, got ${show(s)}`, at);
  const out: TargetStreamLimits = {};
  for (const key of Object.keys(s)) {
    if (!(TARGET_STREAM_KEYS as readonly string[]).includes(key))
      throw new OptionError(`${at}.${key} is not a stream limit (${TARGET_STREAM_KEYS.join(', ')})`, `${at}.${key}`);
    const v = s[key as keyof TargetStreamLimits];
    if (v === undefined) continue;
    checkNumber(`${at}.${key}`, v, 0, Infinity, { minExclusive: true });
    out[key as keyof TargetStreamLimits] = v;
  }
  return Object.freeze(out);
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
