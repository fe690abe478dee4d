/**
 * One span as `calibrate` keeps it: only the fields the fit needs. Prompts, completions, tool
 * arguments and results (`gen_ai.prompt`, `gen_ai.input.messages`, `ai.prompt`, event bodies,
 * …) are never read: the reader looks at an attribute's key first and takes the value only of
 * the keys below.
 */
export interface Span {
  id: string;
  /** '' for a span with no parent. */
  parent: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** ms since the epoch. */
  start: number;
  end: number;
  role: Role;
  /** The span's name, for what calibrate says of spans it did not recognise (span names are operation names, not content). */
  name: string;
  model: string;
  tool: string;
  agent: string;
  inTok: number;
  outTok: number;
  /** HTTP status of the answer, 0 when none was recorded. */
  status: number;
  /** The span says it failed: status ERROR, `error.type`, or an HTTP status ≥ 400. */
  failed: boolean;
  errorType: string;
  /** `x-stainless-retry-count` sent with the request, −1 when not recorded. */
  retryCount: number;
  /** `retry-after(-ms)` of the answer, ms; −1 when not recorded. */
  retryAfterMs: number;
  /** Time to first token from the span's start, ms (a first-chunk event or `ai.response.msToFirstChunk`); −1 when none. */
  firstTokenMs: number;
  /** The instrumentation scope that wrote it (`@opentelemetry/instrumentation-openai`, `ai`). */
  scope: string;
}

/** What a span is to the call tree. */
export const Role = {
  /** Not a GenAI span: its children are taken up to its parent. */
  other: 0,
  agent: 1,
  /** One logical model call (`chat`, `embeddings`, `ai.generateText.doGenerate`). */
  model: 2,
  tool: 3,
  /** An HTTP client span: under a model call, one attempt of it. */
  http: 4,
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** `gen_ai.operation.name` values, old and new, by role. */
const MODEL_OPS = new Set(['chat', 'text_completion', 'generate_content', 'embeddings', 'completion', 'responses']);
const AGENT_OPS = new Set(['invoke_agent', 'create_agent', 'invoke_workflow']);
const TOOL_OPS = new Set(['execute_tool']);

/** The Vercel AI SDK's `ai.*` operations (its `ai.operationId`, also the span's name). */
function vercelRole(op: string): Role {
  if (op === 'ai.toolCall') return Role.tool;
  if (/^ai\.\w+\.do(Generate|Stream|Embed)$/.test(op)) return Role.model;
  if (/^ai\.(generateText|streamText|generateObject|streamObject|embed|embedMany)$/.test(op)) return Role.agent;
  return Role.other;
}

/** The role of a span from its operation name (or the `ai.*` id), its kind and whether it carried HTTP attributes. */
export function roleOf(op: string, aiOp: string, name: string, kind: number, http: boolean): Role {
  if (op !== '') {
    if (MODEL_OPS.has(op)) return Role.model;
    if (AGENT_OPS.has(op)) return Role.agent;
    if (TOOL_OPS.has(op)) return Role.tool;
  }
  const v = vercelRole(aiOp !== '' ? aiOp : name);
  if (v !== Role.other) return v;
  if (http && kind === 3) return Role.http;
  return Role.other;
}

/** Whether a span carried any GenAI attribute (`gen_ai.*` or the Vercel AI SDK's `ai.*`). */
export function isGenAi(role: Role): boolean {
  return role === Role.agent || role === Role.model || role === Role.tool;
}
