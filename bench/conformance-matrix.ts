import OpenAI from 'openai';
import { SeededRandom } from '../src/engine/random.js';
import type { FaultPhaseInput } from '../src/fake-upstream/fault-phases.js';
import { createFakeUpstream, type FakeUpstream } from '../src/fake-upstream/server.js';
import { guardedFetch, type GuardedFetchOptions } from '../src/integrations/guarded-fetch.js';
import type { StreamGuardOptions } from '../src/integrations/engine-http-options.js';

/**
 * The conformance matrix: one single-request LLM fault at a time on the primary model of a fake
 * upstream (real HTTP on 127.0.0.1), one call through the official OpenAI SDK with
 * `guardedFetch` in front (`maxRetries: 0`), and what the engine made of it: attempts per model
 * from the upstream's request log, time to answer, who answered and what the caller got. Shared
 * by `npm run bench -- --suite conformance` (the README table) and its test.
 */

/** The models: a primary, a fallback on the same origin, and one with a larger context window. */
export const PRIMARY = 'gpt-4o';
export const FALLBACK = 'gpt-4o-mini';
export const LONG = 'gpt-4o-long';

/** The integration's timeouts scaled down (defaults 30 s, 10 s, 20 s, 15 s) so the matrix runs in seconds. */
export const CONFORMANCE_TIMEOUTS = {
  headersTimeoutMs: 2_000,
  stream: { headersTimeoutMs: 1_000, firstTokenMs: 800, idleMs: 500 } satisfies StreamGuardOptions,
  timeoutMs: 15_000,
};

/** Context windows: the primary's and fallback's are equal, so a context-length error skips the fallback. */
const WINDOW = 8_000;
const LONG_WINDOW = 128_000;

export interface ConformanceCase {
  name: string;
  /** The phase installed on the primary only (`model` is filled in). */
  fault: Omit<FaultPhaseInput, 'model'>;
  /** A phase on the fallback as well (prefill-rejected: the fallback refuses the continuation). */
  fallbackFault?: Omit<FaultPhaseInput, 'model'>;
  stream: boolean;
  commit?: StreamGuardOptions['commit'];
  /**
   * The fallback target declares `continuation: 'prefill'` (its model on the fake upstream takes
   * prefills), so a committed stream that breaks is resumed there (`stream.resume`, the default).
   */
  resume?: boolean;
}

/** What the caller got: a whole answer (its finish reason), a clean error, or a success that is not whole. */
export type Outcome =
  | { kind: 'complete'; finish: string; resumed?: number }
  | { kind: 'error'; status: number | undefined; code: string | undefined }
  | { kind: 'truncated' };

export interface ConformanceResult {
  name: string;
  stream: boolean;
  attempts: { primary: number; fallback: number; long: number };
  /** From the call to its answer (the whole stream read, or the error), ms. */
  ms: number;
  /** `x-stormlab-target` of the answer, when the caller got one. */
  target: string | undefined;
  outcome: Outcome;
}

const RETRY_AFTER_MS = 300;

const cases = (): ConformanceCase[] => {
  const both = (name: string, fault: ConformanceCase['fault']): ConformanceCase[] => [
    { name, fault, stream: true },
    { name, fault, stream: false },
  ];
  return [
    ...both('none (healthy)', { kind: 'latency', factor: 1 }),
    ...both(`429 retry-after ${RETRY_AFTER_MS} ms`, { kind: 'errors', status: 429, retryAfterMs: RETRY_AFTER_MS }),
    ...both('503 outage', { kind: 'outage', status: 503 }),
    ...both('500 errors', { kind: 'errors', status: 500 }),
    ...both('connection reset', { kind: 'reset' }),
    ...both('silent provider (hang before headers)', { kind: 'hang' }),
    { name: 'slow first token (3 s)', fault: { kind: 'slow-first-token', ttftMs: 3_000 }, stream: true },
    { name: 'stall after 5 tokens', fault: { kind: 'stall', afterTokens: 5 }, stream: true },
    { name: 'cut after 5 tokens', fault: { kind: 'cut', afterTokens: 5 }, stream: true },
    {
      name: "cut after 5 tokens, commit: 'complete'",
      fault: { kind: 'cut', afterTokens: 5 },
      stream: true,
      commit: 'complete',
    },
    {
      name: "stall after 5 tokens, commit: 'complete'",
      fault: { kind: 'stall', afterTokens: 5 },
      stream: true,
      commit: 'complete',
    },
    {
      name: 'cut after 5 tokens, fallback continues',
      fault: { kind: 'cut', afterTokens: 5 },
      stream: true,
      resume: true,
    },
    {
      name: 'stall after 5 tokens, fallback continues',
      fault: { kind: 'stall', afterTokens: 5 },
      stream: true,
      resume: true,
    },
    {
      name: 'cut after 5, fallback continues but rejects the prefill',
      fault: { kind: 'cut', afterTokens: 5 },
      fallbackFault: { kind: 'prefill-rejected' },
      stream: true,
      resume: true,
    },
    { name: 'malformed event', fault: { kind: 'malformed' }, stream: true },
    { name: 'missing [DONE]', fault: { kind: 'missing-done' }, stream: true },
    { name: 'mid-stream error', fault: { kind: 'midstream' }, stream: true },
    {
      name: 'content filter (finish)',
      fault: { kind: 'content-filter', mode: 'finish', afterTokens: 3 },
      stream: true,
    },
    ...both('content filter (400)', { kind: 'content-filter', mode: 'reject' }),
    ...both('context length', { kind: 'context-length', contextTokens: 10 }),
  ];
};

export const CONFORMANCE_CASES: readonly ConformanceCase[] = cases();

const ask = (stream: boolean) => ({
  model: PRIMARY,
  max_tokens: 20,
  stream,
  messages: [{ role: 'user' as const, content: 'Say something about retry storms, please.' }],
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function errorOutcome(err: unknown): Outcome {
  if (err instanceof OpenAI.APIError) {
    const code = err.code ?? (err.error as { type?: string } | undefined)?.type;
    return { kind: 'error', status: err.status, code: code ?? undefined };
  }
  return { kind: 'error', status: undefined, code: err instanceof Error ? err.name : String(err) };
}

async function call(
  fu: FakeUpstream,
  c: ConformanceCase,
): Promise<{ target: string | undefined; outcome: Outcome; ms: number }> {
  const options: GuardedFetchOptions = {
    targets: [
      { name: 'primary', origin: fu.url, model: PRIMARY, contextWindow: WINDOW },
      {
        name: 'fallback',
        origin: fu.url,
        model: FALLBACK,
        contextWindow: WINDOW,
        ...(c.resume === true ? { continuation: 'prefill' as const } : {}),
      },
      { name: 'long', origin: fu.url, model: LONG, contextWindow: LONG_WINDOW },
    ],
    headersTimeoutMs: CONFORMANCE_TIMEOUTS.headersTimeoutMs,
    timeoutMs: CONFORMANCE_TIMEOUTS.timeoutMs,
    stream: { ...CONFORMANCE_TIMEOUTS.stream, ...(c.commit === undefined ? {} : { commit: c.commit }) },
  };
  const client = new OpenAI({ apiKey: 'test', baseURL: `${fu.url}/v1`, maxRetries: 0, fetch: guardedFetch(options) });
  const t0 = performance.now();
  let target: string | undefined;
  let outcome: Outcome;
  try {
    if (c.stream) {
      const { data, response } = await client.chat.completions.create({ ...ask(true), stream: true }).withResponse();
      target = response.headers.get('x-stormlab-target') ?? undefined;
      let finish: string | undefined;
      let resumed: number | undefined;
      for await (const chunk of data) {
        finish = chunk.choices[0]?.finish_reason ?? finish;
        resumed = (chunk as { stormlab_resume?: { resumptions: number } }).stormlab_resume?.resumptions ?? resumed;
      }
      outcome =
        finish === undefined
          ? { kind: 'truncated' }
          : { kind: 'complete', finish, ...(resumed === undefined ? {} : { resumed }) };
    } else {
      const { data, response } = await client.chat.completions.create({ ...ask(false), stream: false }).withResponse();
      target = response.headers.get('x-stormlab-target') ?? undefined;
      const finish = data.choices[0]?.finish_reason;
      outcome = finish ? { kind: 'complete', finish } : { kind: 'truncated' };
    }
  } catch (err) {
    outcome = errorOutcome(err);
    if (err instanceof OpenAI.APIError) target ??= err.headers?.get('x-stormlab-target') ?? undefined;
  }
  return { target, outcome, ms: performance.now() - t0 };
}

/** Runs every case against one fake upstream (faults replaced and the request log reset between cases). */
export async function runConformance(
  list: readonly ConformanceCase[] = CONFORMANCE_CASES,
): Promise<ConformanceResult[]> {
  // Answers end by themselves at 20 tokens, the requests' limit: a healthy answer finishes with `stop`.
  const fast = (name: string) => ({ name, slots: 8, queue: 32, ttftMs: 20, tpotMs: 2, answerTokens: 20 });
  // The fallback's model takes prefills; only the rows whose fallback target declares it send one.
  const fu = await createFakeUpstream({
    upstream: { models: [fast(PRIMARY), { ...fast(FALLBACK), continuation: 'prefill' as const }, fast(LONG)] },
    random: new SeededRandom(11),
    unknownModels: 'reject',
  });
  const out: ConformanceResult[] = [];
  try {
    for (const c of list) {
      fu.setFaults([
        { ...c.fault, model: PRIMARY },
        ...(c.fallbackFault === undefined ? [] : [{ ...c.fallbackFault, model: FALLBACK }]),
      ]);
      fu.reset();
      const r = await call(fu, c);
      // An abandoned request (a hang, a stall) is logged when the server sees its client leave.
      await sleep(100);
      const log = fu.requests();
      const count = (m: string) => log.filter((e) => e.model === m).length;
      out.push({
        name: c.name,
        stream: c.stream,
        attempts: { primary: count(PRIMARY), fallback: count(FALLBACK), long: count(LONG) },
        ...r,
      });
    }
  } finally {
    await fu.close();
  }
  return out;
}

/** An outcome in a few words for the table. */
export function describeOutcome(o: Outcome): string {
  if (o.kind === 'complete') return `complete (${o.finish})${o.resumed === undefined ? '' : `, resumed ×${o.resumed}`}`;
  if (o.kind === 'truncated') return 'TRUNCATED SUCCESS';
  return `clean error ${o.status ?? ''} ${o.code ?? ''}`.trim();
}
