/**
 * The second source: the same shape of program on the Vercel AI SDK, traced by its own
 * telemetry (`experimental_telemetry`: `ai.generateText`, `ai.generateText.doGenerate` per
 * step and per retry — the SDK retries by calling the model again, a sibling span — and
 * `ai.toolCall`). Each root task is an orchestrator (a manual `invoke_agent` span) fanning out
 * to FANOUT researchers at once; each researcher is one `generateText` tools loop (the model
 * asks for `search`, the tool runs, the model answers) with the SDK's own retries (maxRetries 2,
 * waits of 2 s then 4 s). Run with `node --import ./register.mjs vercel-agents.mjs` (the same
 * tracer provider and OTLP JSON file exporter; the AI SDK writes through the global tracer) and
 * the environment of agents.mjs. It writes what it measured itself: roots and agents timed,
 * every model call (one step, its retries included: the attempts its fetch made in a row after
 * failures) timed at its fetch, and the steps it took.
 */
import { writeFileSync } from 'node:fs';
import { createOpenAI } from '@ai-sdk/openai';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

const env = process.env;
const ROOTS = Number(env.ROOTS ?? 60);
const RATE = Number(env.RATE ?? 4);
const FANOUT = Number(env.FANOUT ?? 2);

function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(Number(env.SEED ?? 1));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tracer = trace.getTracer('agents-app', '1.0.0');

const truth = { roots: [], agents: [], modelCalls: [], steps: 0, attempts: 0, tools: [] };

/**
 * A model per researcher whose fetch times its model calls: an attempt right after a failed
 * one is its retry (a researcher's calls are one after another), so a call runs from its first
 * attempt's start to its last one's end.
 */
function timedModel() {
  let open;
  const close = () => {
    if (open !== undefined) truth.modelCalls.push(open.end - open.start);
    open = undefined;
  };
  const fetchTimed = async (url, init) => {
    const start = performance.now();
    if (open !== undefined && !open.failed) close();
    truth.attempts++;
    try {
      const res = await fetch(url, init);
      if (open === undefined) open = { start };
      open.failed = res.status >= 400;
      // The answer is read by the SDK; the call ends when its body has come.
      const body = await res.arrayBuffer();
      open.end = performance.now();
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (e) {
      if (open === undefined) open = { start };
      open.failed = true;
      open.end = performance.now();
      throw e;
    }
  };
  return {
    model: createOpenAI({ baseURL: env.BASE_URL, apiKey: 'test', fetch: fetchTimed }).chat('gpt-4o-mini'),
    close,
  };
}

function normal() {
  const u = Math.max(1e-12, random());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

async function researcher(i, topic) {
  const t0 = performance.now();
  const { model, close } = timedModel();
  const toolMs = 60 * Math.exp(0.4 * normal());
  try {
    const r = await generateText({
      model,
      // PRIVATE-PROMPT-7731 marks prompt text: the SDK's spans carry it (ai.prompt), calibrate must not.
      prompt: `PRIVATE-PROMPT-7731: research ${topic}, part ${i}.`,
      maxOutputTokens: 60 + Math.floor(random() * 100),
      tools: {
        search: tool({
          description: 'Search the web',
          inputSchema: z.object({ query: z.string() }),
          execute: async ({ query }) => {
            const s = performance.now();
            await sleep(toolMs);
            truth.tools.push(performance.now() - s);
            return `results for ${String(query).length} chars`;
          },
        }),
      },
      stopWhen: stepCountIs(4),
      experimental_telemetry: { isEnabled: true, functionId: 'researcher' },
    });
    truth.steps += r.steps.length;
    return r.text;
  } finally {
    close();
    truth.agents.push(performance.now() - t0);
  }
}

function orchestrator(n) {
  return tracer.startActiveSpan(
    'invoke_agent orchestrator',
    {
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'orchestrator' },
    },
    async (span) => {
      const t0 = performance.now();
      const results = await Promise.allSettled(Array.from({ length: FANOUT }, (_, i) => researcher(i, `topic ${n}`)));
      if (results.every((r) => r.status === 'rejected')) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', 'AllFailed');
      }
      truth.roots.push(performance.now() - t0);
      span.end();
    },
  );
}

const started = [];
let at = 0;
const t0 = performance.now();
for (let n = 0; n < ROOTS; n++) {
  const wait = t0 + at - performance.now();
  if (wait > 0) await sleep(wait);
  started.push(orchestrator(n));
  at += (-Math.log(1 - random()) / RATE) * 1000;
}
await Promise.all(started);
await globalThis.otelShutdown();
writeFileSync(env.TRUTH_FILE, `${JSON.stringify(truth)}\n`);
