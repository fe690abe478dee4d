import { hashSeed, type Random, SeededRandom } from '../engine/random.js';
import type { AnswerTokens } from '../upstream/config.js';
import { sampler } from '../upstream/distribution.js';
import { OUTPUT_TOKENS_HEADER } from '../upstream/output-tokens-header.js';
import { CHARS_PER_TOKEN, type ReplyPlan } from './reply-plan.js';

/**
 * How long an answer runs when `max_tokens` does not cut it, unless a model says otherwise
 * (`answerTokens`): a median of 300 tokens, one answer in a hundred past 2,000 — the shape of
 * chat answers. So an SDK that sends `max_tokens: 4096` waits for about 300 tokens, and one that
 * sends 5 gets 5 and `finish_reason: length`.
 */
export const ANSWER_TOKENS_DEFAULT: AnswerTokens = { dist: 'lognormal', median: 300, p99: 2000 };

/** How long each choice of one answer is. */
export interface AnswerShape {
  /** Output tokens of each choice (`n` of them; one unless OpenAI's `n` asks for more). */
  tokens: number[];
  /** Whether the token limit cut each choice (`finish_reason: length`, `stop_reason: max_tokens`). */
  truncated: boolean[];
  /** All choices' tokens: what the model serves, times and reports in `usage`. */
  total: number;
}

/** A header value the server refuses, worded for the 400. */
export interface BadLength {
  bad: string;
}

/** Bodies whose repeats are counted at most; past it the counts start over. */
const MAX_COUNTED = 65_536;

/** `x-stormlab-output-tokens` read: `max`, a number of tokens, absent (undefined), or refused. */
export function lengthHeader(value: string | string[] | undefined): 'max' | number | undefined | BadLength {
  if (value === undefined) return undefined;
  const v = (Array.isArray(value) ? value[0] : value).trim();
  if (v === 'max') return 'max';
  if (/^\d+$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER) return Number(v);
  return {
    bad: `Invalid '${OUTPUT_TOKENS_HEADER}' header: expected max or a number of tokens, got ${JSON.stringify(v)}.`,
  };
}

/**
 * The natural lengths of the fake upstream's answers, per model: drawn from the model's
 * `answerTokens` (or `ANSWER_TOKENS_DEFAULT`) by a random seeded from the server's seed, the
 * model, the request body and how many times that body came before — so the same seed and the
 * same requests give the same lengths whatever order distinct bodies arrive in, and a body sent
 * again (a retry, a load tool) draws anew, unless it carries a seed of its own.
 */
export class AnswerLengths {
  private readonly samplers: Array<(() => number) | 'max'>;
  private readonly seen = new Map<number, number>();
  private source: Random = new SeededRandom(0);
  /**
   * How long an answer to a request without `x-stormlab-output-tokens` runs, as if it had sent
   * this value (`PUT /_stormlab/output-tokens`: a harness whose requests reach the server
   * through a gateway that drops the header); undefined: its natural length.
   */
  withoutHeader: 'max' | number | undefined = undefined;

  constructor(
    models: ReadonlyArray<{ answerTokens?: AnswerTokens }>,
    private readonly seed: number,
  ) {
    const draw: Random = { next: () => this.source.next() };
    this.samplers = models.map((m) => {
      const d = m.answerTokens ?? ANSWER_TOKENS_DEFAULT;
      return d === 'max' ? 'max' : sampler(d, draw);
    });
  }

  /**
   * The shape of an answer to `body` (its text) at `model`: `choices` choices of what `plan`
   * says, each at most `maxTokens`. A planned reply (tool calls, JSON, a quoted tool result)
   * runs as long as its text (about 3 characters a token); filler runs its natural length.
   * `header` (`x-stormlab-output-tokens`) overrides both. `seeded`: the body carries its own
   * seed (OpenAI's `seed`), so the same body is answered the same length every time, repeats
   * too (as a seeded request asks a provider for the same answer). `already`: filler words a
   * prefill holds (a continuation): the answer is the rest of the natural one, at least a token.
   */
  shape(
    model: number,
    body: string,
    plan: ReplyPlan,
    maxTokens: number,
    choices: number,
    header: 'max' | number | undefined,
    seeded = false,
    already = 0,
  ): AnswerShape {
    const fixed = header ?? this.withoutHeader ?? (plan.kind === 'filler' ? this.samplers[model] : plannedTokens(plan));
    const key = fixed === 'max' || typeof fixed === 'number' ? '' : this.key(model, body, seeded);
    const tokens: number[] = [];
    const truncated: boolean[] = [];
    let total = 0;
    for (let i = 0; i < choices; i++) {
      const whole = fixed === 'max' ? maxTokens : typeof fixed === 'number' ? fixed : this.draw(fixed, `${key}:${i}`);
      const natural = already > 0 && fixed !== 'max' ? Math.max(1, whole - already) : whole;
      const n = Math.min(natural, maxTokens);
      tokens.push(n);
      truncated.push(plan.truncated || (plan.kind === 'filler' && natural > maxTokens));
      total += n;
    }
    return { tokens, truncated, total };
  }

  /** Repeat counts back to zero (the server's reset): lengths start over as at its start. */
  reset(): void {
    this.seen.clear();
  }

  private key(model: number, body: string, seeded: boolean): string {
    const h = hashSeed(body);
    if (seeded) return `${this.seed}:${model}:${h}:seeded`;
    const k = this.seen.get(h) ?? 0;
    if (this.seen.size >= MAX_COUNTED) this.seen.clear();
    this.seen.set(h, k + 1);
    return `${this.seed}:${model}:${h}:${k}`;
  }

  private draw(sample: () => number, key: string): number {
    this.source = new SeededRandom(key);
    const n = Math.round(sample());
    // At least one token (a draw of 0, or a distribution no scenario check has seen: NaN).
    return Number.isNaN(n) ? 1 : Math.max(1, n);
  }
}

/** Tokens of a planned reply's text: its tool-call arguments or its text, at least one. */
function plannedTokens(plan: ReplyPlan): number {
  const chars =
    plan.kind === 'tools'
      ? plan.calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)
      : plan.kind === 'text'
        ? plan.text.length
        : 0;
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}
