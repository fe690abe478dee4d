/**
 * A multi-agent program, as a user's would be: each root task is an orchestrator that fans out
 * to researcher agents at once; each researcher plans with a model call, runs a tool, then
 * answers with a second model call, one after another. Model calls go through the official
 * openai SDK with its own retries (maxRetries 2, the default); agents and tools are manual
 * spans by the GenAI conventions. Run with `node --import ./register.mjs agents.mjs` (see
 * register.mjs) and:
 *   BASE_URL   the upstream (`stormlab serve`), e.g. http://127.0.0.1:8080/v1
 *   ROOTS      root tasks to run (default 100), arriving at RATE a second (Poisson, default 5)
 *   FANOUT     researchers per root (default 3)
 *   SEED       seeds arrivals, token limits and tool times (default 1)
 *   TRUTH_FILE where to write what the program itself measured (JSON)
 * It writes, from its own clock and counts (not from the traces): every root's, agent's, model
 * call's and tool call's latency, and how many of each it made.
 */
import { writeFileSync } from 'node:fs';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import OpenAI from 'openai';

const env = process.env;
const BASE_URL = env.BASE_URL;
const ROOTS = Number(env.ROOTS ?? 100);
const RATE = Number(env.RATE ?? 5);
const FANOUT = Number(env.FANOUT ?? 3);
const MODEL = env.MODEL ?? 'gpt-4o-mini';

/** mulberry32: a small seeded generator, so a run's arrivals and limits are the same each time. */
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

const client = new OpenAI({ baseURL: BASE_URL, apiKey: 'test' });
const tracer = trace.getTracer('agents-app', '1.0.0');

const truth = { roots: [], agents: [], modelCalls: [], modelFailures: 0, tools: [], agentFailures: 0 };

/** Runs `fn` inside an active span, ending it with its outcome (an error: status ERROR and `error.type`). */
function inSpan(name, attributes, fn) {
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await fn();
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(e?.message ?? e) });
      span.setAttribute('error.type', e?.constructor?.name ?? 'Error');
      throw e;
    } finally {
      span.end();
    }
  });
}

async function timed(list, fn) {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    list.push(performance.now() - t0);
  }
}

async function chat(prompt, maxTokens) {
  try {
    return await timed(truth.modelCalls, () =>
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: prompt }],
        max_tokens: maxTokens,
      }),
    );
  } catch (e) {
    truth.modelFailures++;
    throw e;
  }
}

/** The tool: a search that takes its own time (log-normal, median 60 ms). */
function search(query) {
  const ms = 60 * Math.exp(0.4 * normal());
  return inSpan('execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' }, () =>
    timed(truth.tools, () => sleep(ms).then(() => `results for ${query.length} chars`)),
  );
}

function normal() {
  const u = Math.max(1e-12, random());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function researcher(i, topic) {
  const planTokens = 40 + Math.floor(random() * 80);
  const answerTokens = 80 + Math.floor(random() * 120);
  return inSpan(
    'invoke_agent researcher',
    { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher', 'gen_ai.provider.name': 'openai' },
    () =>
      timed(truth.agents, async () => {
        const plan = await chat(`Plan research ${i} on ${topic}.`, planTokens);
        const found = await search(plan.choices[0].message.content ?? '');
        const answer = await chat(`Answer from: ${found}`, answerTokens);
        return answer.choices[0].message.content;
      }),
  );
}

function orchestrator(n) {
  return inSpan(
    'invoke_agent orchestrator',
    { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'orchestrator' },
    () =>
      timed(truth.roots, async () => {
        const results = await Promise.allSettled(Array.from({ length: FANOUT }, (_, i) => researcher(i, `topic ${n}`)));
        const failed = results.filter((r) => r.status === 'rejected').length;
        truth.agentFailures += failed;
        if (failed === results.length) throw new Error('every researcher failed');
        return results;
      }),
  );
}

const started = [];
let at = 0;
const t0 = performance.now();
for (let n = 0; n < ROOTS; n++) {
  const wait = t0 + at - performance.now();
  if (wait > 0) await sleep(wait);
  started.push(orchestrator(n).catch(() => undefined));
  at += (-Math.log(1 - random()) / RATE) * 1000;
}
await Promise.all(started);
await globalThis.otelShutdown();
writeFileSync(env.TRUTH_FILE, `${JSON.stringify(truth)}\n`);
