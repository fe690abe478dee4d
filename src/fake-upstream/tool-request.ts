import { isObject } from './dialect.js';

/** The three request shapes a reply is planned from. */
export type Provider = 'openai' | 'anthropic' | 'responses';

export interface ToolSpec {
  name: string;
  /** The arguments' JSON Schema (OpenAI `parameters`, Anthropic `input_schema`); `{}` when none. */
  schema: unknown;
}

type ToolChoice = { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'forced'; name: string };

/** What a request says about tools and output format, read the same way from every provider. */
export interface ToolRequest {
  tools: ToolSpec[];
  choice: ToolChoice;
  /** Tool-calling turns of the assistant since the last user message. */
  rounds: number;
  /** The tool results answering the last of those turns, as text. */
  results: string[];
  /** A structured output asked for: a JSON Schema, or `true` for "any JSON object". */
  output: { schema: unknown } | { schema: undefined } | undefined;
}

const AUTO: ToolChoice = { kind: 'auto' };

/**
 * Reads `body` (already checked to be an object with a message list) as `provider` words it. `issuedCall` says whether
 * a Responses `item_reference` id is a function call this server gave out (clients that let the
 * server store items send references instead of the items).
 */
export function readToolRequest(
  provider: Provider,
  body: Record<string, unknown>,
  issuedCall: (itemId: string) => boolean = () => false,
): ToolRequest {
  if (provider === 'openai') return openaiRequest(body);
  if (provider === 'anthropic') return anthropicRequest(body);
  return responsesRequest(body, issuedCall);
}

function openaiRequest(body: Record<string, unknown>): ToolRequest {
  const tools = list(body.tools).flatMap((t) =>
    isObject(t) && isObject(t.function) && typeof t.function.name === 'string'
      ? [{ name: t.function.name, schema: t.function.parameters ?? {} }]
      : [],
  );
  const c = body.tool_choice;
  const choice: ToolChoice =
    c === 'none' || c === 'required'
      ? { kind: c }
      : isObject(c) && isObject(c.function) && typeof c.function.name === 'string'
        ? { kind: 'forced', name: c.function.name }
        : AUTO;
  const f = body.response_format;
  const output = isObject(f)
    ? formatOutput(f.type, isObject(f.json_schema) ? f.json_schema.schema : undefined)
    : undefined;
  let rounds = 0;
  let results: string[] = [];
  for (const m of list(body.messages)) {
    if (!isObject(m)) continue;
    if (m.role === 'user') {
      rounds = 0;
      results = [];
    } else if (m.role === 'assistant' && list(m.tool_calls).length > 0) {
      rounds++;
      results = [];
    } else if (m.role === 'tool' || m.role === 'function') results.push(text(m.content));
  }
  return { tools, choice, rounds, results, output };
}

function anthropicRequest(body: Record<string, unknown>): ToolRequest {
  // Server tools (web search, code execution) have no input_schema: the fake never calls them.
  const tools = list(body.tools).flatMap((t) =>
    isObject(t) && typeof t.name === 'string' && isObject(t.input_schema)
      ? [{ name: t.name, schema: t.input_schema }]
      : [],
  );
  const c = body.tool_choice;
  const choice: ToolChoice = !isObject(c)
    ? AUTO
    : c.type === 'none'
      ? { kind: 'none' }
      : c.type === 'any'
        ? { kind: 'required' }
        : c.type === 'tool' && typeof c.name === 'string'
          ? { kind: 'forced', name: c.name }
          : AUTO;
  // Structured outputs: `output_format` (the beta) or `output_config.format`.
  const config = isObject(body.output_config) ? body.output_config.format : undefined;
  const f = isObject(body.output_format) ? body.output_format : isObject(config) ? config : undefined;
  const output = f === undefined ? undefined : formatOutput(f.type, f.schema);
  let rounds = 0;
  let results: string[] = [];
  for (const m of list(body.messages)) {
    if (!isObject(m)) continue;
    const blocks = list(m.content).filter(isObject);
    if (m.role === 'user') {
      const toolResults = blocks.filter((b) => b.type === 'tool_result');
      if (toolResults.length === 0 || toolResults.length < blocks.length) {
        rounds = 0;
        results = [];
      } else results.push(...toolResults.map((b) => text(b.content)));
    } else if (m.role === 'assistant' && blocks.some((b) => b.type === 'tool_use')) {
      rounds++;
      results = [];
    }
  }
  return { tools, choice, rounds, results, output };
}

function responsesRequest(body: Record<string, unknown>, issuedCall: (itemId: string) => boolean): ToolRequest {
  const tools = list(body.tools).flatMap((t) =>
    isObject(t) && t.type === 'function' && typeof t.name === 'string'
      ? [{ name: t.name, schema: t.parameters ?? {} }]
      : [],
  );
  const c = body.tool_choice;
  const choice: ToolChoice =
    c === 'none' || c === 'required'
      ? { kind: c }
      : isObject(c) && c.type === 'function' && typeof c.name === 'string'
        ? { kind: 'forced', name: c.name }
        : AUTO;
  const f = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
  const output = f === undefined ? undefined : formatOutput(f.type, f.schema);
  let rounds = 0;
  let results: string[] = [];
  let inCall = false;
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : list(body.input);
  for (const item of items) {
    if (!isObject(item)) continue;
    const call =
      item.type === 'function_call' ||
      (item.type === 'item_reference' && typeof item.id === 'string' && issuedCall(item.id));
    if (call) {
      if (!inCall) {
        rounds++;
        results = [];
      }
      inCall = true;
      continue;
    }
    inCall = false;
    if (item.type === 'function_call_output') results.push(text(item.output));
    else if (item.role === 'user') {
      rounds = 0;
      results = [];
    }
  }
  return { tools, choice, rounds, results, output };
}

function formatOutput(type: unknown, schema: unknown): ToolRequest['output'] {
  if (type === 'json_schema') return { schema: schema ?? {} };
  if (type === 'json_object') return { schema: undefined };
  return undefined;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A message or tool result's content as text: a string, or the text of its parts. */
function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}
