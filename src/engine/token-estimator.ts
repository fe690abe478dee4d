import { checkNumber, checkPositive } from './options.js';

/**
 * Turns text into a token count for reservations. The default is a character ratio; for exact
 * counts pass a real tokenizer: `{ estimate: (t) => tokenizer.encode(t).length }`.
 */
export interface TokenEstimator {
  estimate(text: string): number;
}

/**
 * `ceil(length / chars)`. Three characters per token over-estimates English a little (~4 is
 * typical) and under-estimates CJK text (~1–1.5), which is why reservations are reconciled.
 */
export const charsPerToken = (chars = 3): TokenEstimator => {
  checkPositive('charsPerToken.chars', chars);
  return { estimate: (text) => Math.ceil(text.length / chars) };
};

const defaultEstimator = charsPerToken(3);

/** Chat formats wrap each message in a few tokens of role and separators. */
const MESSAGE_OVERHEAD = 4;

/** The request fields the estimate reads (OpenAI chat/completions/responses and Anthropic shapes). */
export interface ChatTokenRequest {
  messages?: Array<{ content?: unknown }>;
  /** Anthropic's top-level system prompt: a string or text parts. Counted like a message. */
  system?: unknown;
  prompt?: string;
  max_tokens?: number;
  max_completion_tokens?: number;
  max_output_tokens?: number;
}

/**
 * A reservation-sized estimate for one call: input + output.
 *
 *   input  = Σ_messages (estimate(text of the content) + 4)  [+ prompt, + system]
 *   output = the largest of max_tokens / max_completion_tokens / max_output_tokens, or the default
 *
 * The output side is the caller's own bound, so the estimate only over-reserves; the
 * reconcile step refunds what the upstream did not use. Content can be a string or an array
 * of parts; parts count their `text` (and nested `content`, as in tool results); images and
 * other parts count 0.
 */
export function estimateChatTokens(
  req: ChatTokenRequest,
  estimator: TokenEstimator = defaultEstimator,
  defaultMaxTokens = 1024,
): number {
  checkNumber('estimateChatTokens.defaultMaxTokens', defaultMaxTokens, 0);
  let input = 0;
  const messages = req.messages;
  if (Array.isArray(messages)) {
    for (let i = 0; i < messages.length; i++)
      input += contentTokens(messages[i]?.content, estimator, 0) + MESSAGE_OVERHEAD;
  }
  if (req.system !== undefined) input += contentTokens(req.system, estimator, 0) + MESSAGE_OVERHEAD;
  if (typeof req.prompt === 'string') input += estimator.estimate(req.prompt);
  return input + maxOutput(req, defaultMaxTokens);
}

function maxOutput(req: ChatTokenRequest, fallback: number): number {
  let best = -1;
  if (isCount(req.max_tokens) && req.max_tokens > best) best = req.max_tokens;
  if (isCount(req.max_completion_tokens) && req.max_completion_tokens > best) best = req.max_completion_tokens;
  if (isCount(req.max_output_tokens) && req.max_output_tokens > best) best = req.max_output_tokens;
  return best >= 0 ? best : fallback;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v < Infinity;
}

/** Nesting is bounded so a cyclic or hostile body cannot recurse forever. */
const MAX_DEPTH = 4;

function contentTokens(content: unknown, estimator: TokenEstimator, depth: number): number {
  if (typeof content === 'string') return estimator.estimate(content);
  if (!Array.isArray(content) || depth >= MAX_DEPTH) return 0;
  let sum = 0;
  for (let i = 0; i < content.length; i++) {
    const part: unknown = content[i];
    if (typeof part === 'string') {
      sum += estimator.estimate(part);
    } else if (part !== null && typeof part === 'object') {
      const { text, content: nested } = part as { text?: unknown; content?: unknown };
      if (typeof text === 'string') sum += estimator.estimate(text);
      if (nested !== undefined) sum += contentTokens(nested, estimator, depth + 1);
    }
  }
  return sum;
}
