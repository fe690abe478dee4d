import { hashSeed } from '../engine/random.js';
import { valueForSchema } from './json-schema-value.js';
import type { ToolPolicy } from './tool-policy.js';
import type { ToolRequest, ToolSpec } from './tool-request.js';

interface PlannedToolCall {
  /** The call's id as the provider spells it (`call_…`, `toolu_…`). */
  id: string;
  name: string;
  /** JSON text valid against the tool's schema (cut short when `truncated`). */
  arguments: string;
}

/**
 * What the model's successful answer says. `filler`: the model's filler text, exactly as long
 * as the completion it was asked for (so never cut); `text`: a given text (structured JSON, or the answer after tool
 * results); `tools`: tool calls. `truncated`: the answer did not fit the token limit and was
 * cut there (`finish_reason: length`, `stop_reason: max_tokens`, Responses `incomplete`).
 */
export type ReplyPlan =
  | { kind: 'filler'; truncated: boolean }
  | { kind: 'text'; text: string; truncated: boolean }
  | { kind: 'tools'; calls: PlannedToolCall[]; truncated: boolean };

export interface PlanContext {
  policy: ToolPolicy;
  seed: number;
  /** The completion's token limit (the one asked for, or the server's default). */
  maxTokens: number;
  /** A new tool call id (`call_…`, `toolu_…`): random, so unique across requests and runs, unlike the rest of the plan. */
  newCallId(): string;
}

/** About how many characters a token covers, as the prompt estimate counts them. */
export const CHARS_PER_TOKEN = 3;
const RESULT_ECHO_CHARS = 400;
/** Filler text is as long as the completion asked for, so it always fits its limit. */
const FILLER: ReplyPlan = { kind: 'filler', truncated: false };

/**
 * The answer to a request, decided from what it offers and asks (`ToolRequest`) and the tool
 * policy: a forced tool or `required` always gets tool calls, `none` never; with `auto` the
 * first `policy.rounds` turns since the user's message call tools and the next one answers.
 * A structured output (`json_schema`, `json_object`) answers with JSON valid against it.
 * Arguments and values are drawn from the seed, so a conversation replays identically (but for
 * the call ids, which are random).
 */
export function planReply(req: ToolRequest, ctx: PlanContext): ReplyPlan {
  const usable = req.choice.kind !== 'none' && req.tools.length > 0;
  const forced =
    req.choice.kind === 'forced' ? req.tools.find((t) => t.name === (req.choice as { name: string }).name) : undefined;
  const callTools =
    usable && (forced !== undefined || req.choice.kind === 'required' || req.rounds < ctx.policy.rounds);
  if (callTools) return toolCalls(req, ctx, forced);
  const salt = `${ctx.seed}:${req.rounds}:${req.results.length}`;
  if (req.output !== undefined) {
    const value =
      req.output.schema === undefined ? { answer: 'storm passed' } : valueForSchema(req.output.schema, salt);
    return fitText(JSON.stringify(value), ctx.maxTokens);
  }
  if (req.results.length > 0) {
    const echo = req.results.join(' | ').slice(0, RESULT_ECHO_CHARS);
    return fitText(`Done after ${req.rounds} tool turn(s). The tools said: ${echo}`, ctx.maxTokens);
  }
  return FILLER;
}

function toolCalls(req: ToolRequest, ctx: PlanContext, forced: ToolSpec | undefined): ReplyPlan {
  const n = forced !== undefined ? 1 : ctx.policy.parallel;
  let budget = ctx.maxTokens * CHARS_PER_TOKEN;
  let truncated = false;
  const calls: PlannedToolCall[] = [];
  for (let j = 0; j < n && !truncated; j++) {
    const salt = `${ctx.seed}:${req.rounds}:${j}`;
    const tool = forced ?? pickTool(req.tools, ctx, req.rounds * n + j, salt);
    let args = JSON.stringify(valueForSchema(tool.schema, `${salt}:${tool.name}`));
    if (args.length > budget) {
      args = args.slice(0, Math.max(0, budget));
      truncated = true;
    }
    budget -= args.length;
    calls.push({ id: ctx.newCallId(), name: tool.name, arguments: args });
  }
  return { kind: 'tools', calls, truncated };
}

function pickTool(tools: ToolSpec[], ctx: PlanContext, k: number, salt: string): ToolSpec {
  if (ctx.policy.pick === 'cycle') return tools[k % tools.length];
  return tools[hashSeed(`${salt}:pick`) % tools.length];
}

/** `text`, cut at the token limit when it is longer. */
function fitText(text: string, maxTokens: number): ReplyPlan {
  const max = maxTokens * CHARS_PER_TOKEN;
  return text.length > max
    ? { kind: 'text', text: text.slice(0, max), truncated: true }
    : { kind: 'text', text, truncated: false };
}
