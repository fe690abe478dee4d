import { SeededRandom } from '../../src/engine/random.js';

/**
 * Synthetic OTLP JSON traces of a multi-agent program, made deterministically from a seed:
 * an orchestrator fans out to agents in parallel, each agent makes model calls one after
 * another and then a tool call. Two shapes of retry, as real traces have them:
 * - `http`: as @opentelemetry/instrumentation-openai 0.21 writes them — one `chat` span per
 *   logical call, each attempt an HTTP `POST` client child with its status (the OpenAI SDK's
 *   loop: 2 retries, 0.5 s × 2^n less up to 25 % jitter);
 * - `sibling`: as the Vercel AI SDK writes them — `ai.generateText` with one
 *   `ai.generateText.doGenerate` span per attempt (2 retries, 2 s then 4 s) and `ai.toolCall`.
 */
export interface FixtureOptions {
  seed?: number;
  roots?: number;
  /** Root tasks per second (Poisson). */
  rate?: number;
  /** Agents per root: a number, or `{ poisson: mean }` (drawn per root, at least 1). */
  agents?: number | { poisson: number };
  callsPerAgent?: number;
  /** Share of attempts answered 429 during [failFrom, failTo) ms from the first root (the whole run by default). */
  failRate?: number;
  failFrom?: number;
  failTo?: number;
  shape?: 'http' | 'sibling';
  /** Record `x-stainless-retry-count` on HTTP spans. */
  retryHeader?: boolean;
  /** Closed loop: this many users, each starting its next task as its last one ends. */
  users?: number;
  /** Put a prompt text attribute and event on model spans (for the privacy test). */
  secret?: string;
}

type Attr = { key: string; value: Record<string, unknown> };
const s = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
const i = (key: string, v: number): Attr => ({ key, value: { intValue: String(v) } });

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
  events?: unknown[];
  status?: { code: number };
}

const T0 = 1_760_000_000_000; // ms since the epoch
const ns = (ms: number) => `${Math.round((T0 + ms) * 1000)}000`;
const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

export class TraceWriter {
  private spanSeq = 0;
  readonly spans: { scope: string; span: OtlpSpan }[] = [];
  constructor(private readonly traceId: string) {}
  add(
    scope: string,
    parent: string | undefined,
    name: string,
    kind: number,
    start: number,
    end: number,
    attributes: Attr[],
    failed = false,
    events?: unknown[],
  ): string {
    const id = hex(++this.spanSeq, 16);
    this.spans.push({
      scope,
      span: {
        traceId: this.traceId,
        spanId: id,
        ...(parent === undefined ? {} : { parentSpanId: parent }),
        name,
        kind,
        startTimeUnixNano: ns(start),
        endTimeUnixNano: ns(end),
        attributes,
        ...(events === undefined ? {} : { events }),
        ...(failed ? { status: { code: 2 } } : {}),
      },
    });
    return id;
  }
}

/** One ExportTraceServiceRequest holding these spans, grouped by scope. */
export function otlpBody(spans: { scope: string; span: OtlpSpan }[]): unknown {
  const scopes = new Map<string, OtlpSpan[]>();
  for (const x of spans) {
    let l = scopes.get(x.scope);
    if (l === undefined) scopes.set(x.scope, (l = []));
    l.push(x.span);
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: [s('service.name', 'fixture')] },
        scopeSpans: [...scopes].map(([name, list]) => ({ scope: { name, version: '1.0.0' }, spans: list })),
      },
    ],
  };
}

export interface Truth {
  roots: number;
  agentCalls: number;
  modelCalls: number;
  attempts: number;
  toolCalls: number;
}

/** Traces as JSON Lines (one body per root task, spans in end order as exporters send them), and what they hold. */
/** A Poisson draw (Knuth's product of uniforms). */
function poisson(r: SeededRandom, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = r.next();
  while (p > limit) {
    k++;
    p *= r.next();
  }
  return k;
}

export function fixtureTraces(o: FixtureOptions = {}): { lines: string[]; truth: Truth } {
  const truth: Truth = { roots: 0, agentCalls: 0, modelCalls: 0, attempts: 0, toolCalls: 0 };
  return { lines: [...fixtureLines(o, truth)], truth };
}

/** The lines of `fixtureTraces` one at a time (a million spans need not be held), counting into `truth`. */
export function* fixtureLines(o: FixtureOptions, truth: Truth): Generator<string> {
  const r = new SeededRandom(o.seed ?? 7);
  const roots = o.roots ?? 200;
  const rate = o.rate ?? 5;
  const agents = o.agents ?? 3;
  const calls = o.callsPerAgent ?? 2;
  const failRate = o.failRate ?? 0;
  const shape = o.shape ?? 'http';
  truth.roots = roots;
  const userFree = Array.from({ length: o.users ?? 0 }, () => 0);
  let t = 0;
  const failing = (at: number) =>
    at >= (o.failFrom ?? 0) && at < (o.failTo ?? Number.POSITIVE_INFINITY) && r.next() < failRate;
  for (let n = 0; n < roots; n++) {
    let start: number;
    let user = -1;
    if (userFree.length > 0) {
      user = userFree.indexOf(Math.min(...userFree));
      start = userFree[user] + (n < userFree.length ? n * 37 : 5);
    } else {
      start = t;
      t += (-Math.log(1 - r.next()) * 1000) / rate;
    }
    const w = new TraceWriter(hex(n + 1, 32));
    const scope = shape === 'http' ? '@opentelemetry/instrumentation-openai' : 'ai';
    const orchestrator = { id: '', end: start };
    const kids: Array<() => void> = [];
    const orchId = w.add('app', undefined, 'invoke_agent orchestrator', 1, start, start, [
      s('gen_ai.operation.name', 'invoke_agent'),
      s('gen_ai.agent.name', 'orchestrator'),
    ]);
    orchestrator.id = orchId;
    let orchEnd = start;
    const fanout = typeof agents === 'number' ? agents : Math.max(1, poisson(r, agents.poisson));
    for (let a = 0; a < fanout; a++) {
      truth.agentCalls++;
      const aStart = start + 2;
      let at = aStart + 1;
      const agentId =
        shape === 'http'
          ? w.add('app', orchId, 'invoke_agent researcher', 1, aStart, aStart, [
              s('gen_ai.operation.name', 'invoke_agent'),
              s('gen_ai.agent.name', 'researcher'),
            ])
          : w.add('ai', orchId, 'ai.generateText', 1, aStart, aStart, [
              s('ai.operationId', 'ai.generateText'),
              s('operation.name', 'ai.generateText researcher'),
              s('ai.telemetry.functionId', 'researcher'),
              s('ai.model.id', 'gpt-4o-mini'),
            ]);
      for (let c = 0; c < calls; c++) {
        truth.modelCalls++;
        const out = 50 + Math.floor(r.next() * 100);
        const inTok = 200 + Math.floor(r.next() * 300);
        const service = () => 300 * Math.exp(0.3 * (r.next() - 0.5)) + out * 10;
        if (shape === 'http') {
          const callStart = at;
          const attempts: Array<[number, number, number]> = [];
          for (let k = 0; k <= 2; k++) {
            const fail = failing(at - 0);
            const d = fail ? 20 : service();
            attempts.push([at, at + d, fail ? 429 : 200]);
            truth.attempts++;
            at += d;
            if (!fail) break;
            if (k < 2) at += 500 * 2 ** k * (1 - 0.25 * r.next());
          }
          const ok = attempts[attempts.length - 1][2] === 200;
          const chatAttrs = [
            s('gen_ai.operation.name', 'chat'),
            s('gen_ai.system', 'openai'),
            s('gen_ai.request.model', 'gpt-4o-mini'),
            ...(ok ? [i('gen_ai.usage.input_tokens', inTok), i('gen_ai.usage.output_tokens', out)] : []),
            ...(ok ? [] : [s('error.type', 'RateLimitError')]),
            ...(o.secret ? [s('gen_ai.prompt', o.secret)] : []),
          ];
          const chatId = w.add(
            scope,
            agentId,
            'chat gpt-4o-mini',
            3,
            callStart,
            at,
            chatAttrs,
            !ok,
            o.secret
              ? [{ name: 'gen_ai.user.message', timeUnixNano: ns(callStart), attributes: [s('content', o.secret)] }]
              : undefined,
          );
          attempts.forEach(([s0, e0, st], k) =>
            w.add(
              '@opentelemetry/instrumentation-undici',
              chatId,
              'POST',
              3,
              s0,
              e0,
              [
                s('http.request.method', 'POST'),
                i('http.response.status_code', st),
                ...(o.retryHeader
                  ? [
                      {
                        key: 'http.request.header.x-stainless-retry-count',
                        value: { arrayValue: { values: [{ stringValue: String(k) }] } },
                      },
                    ]
                  : []),
              ],
              st >= 400,
            ),
          );
          if (!ok) break;
        } else {
          let failedOut = false;
          for (let k = 0; k <= 2; k++) {
            const fail = failing(at);
            const d = fail ? 20 : service();
            truth.attempts++;
            w.add(
              'ai',
              agentId,
              'ai.generateText.doGenerate',
              3,
              at,
              at + d,
              [
                s('ai.operationId', 'ai.generateText.doGenerate'),
                s('gen_ai.system', 'openai.chat'),
                s('gen_ai.request.model', 'gpt-4o-mini'),
                ...(fail ? [] : [i('ai.usage.promptTokens', inTok), i('ai.usage.completionTokens', out)]),
              ],
              fail,
            );
            at += d;
            if (!fail) break;
            if (k < 2) at += 2000 * 2 ** k;
            else failedOut = true;
          }
          if (failedOut) break;
        }
        at += 1;
      }
      truth.toolCalls++;
      const tStart = at;
      at += 40 + Math.floor(r.next() * 20);
      if (shape === 'http')
        w.add('app', agentId, 'execute_tool search', 1, tStart, at, [
          s('gen_ai.operation.name', 'execute_tool'),
          s('gen_ai.tool.name', 'search'),
        ]);
      else
        w.add('ai', agentId, 'ai.toolCall', 1, tStart, at, [
          s('ai.operationId', 'ai.toolCall'),
          s('ai.toolCall.name', 'search'),
        ]);
      const agentSpan = w.spans.find((x) => x.span.spanId === agentId)!.span;
      agentSpan.endTimeUnixNano = ns(at + 1);
      if (at + 1 > orchEnd) orchEnd = at + 1;
    }
    void kids;
    const orchSpan = w.spans.find((x) => x.span.spanId === orchId)!.span;
    orchSpan.endTimeUnixNano = ns(orchEnd + 1);
    if (user >= 0) userFree[user] = orchEnd + 1;
    // Exporters send spans as they end: the root last.
    const ordered = [...w.spans].sort((a, b) =>
      Number(BigInt(a.span.endTimeUnixNano) - BigInt(b.span.endTimeUnixNano)),
    );
    yield JSON.stringify(otlpBody(ordered));
  }
}
