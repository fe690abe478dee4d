import { formatDuration } from '../upstream/duration.js';
import type { Dist } from '../upstream/distribution.js';
import type { SdkName } from '../traffic/sdk-presets.js';
import { CalibrateError } from './calibrate-error.js';
import { fitArrivals } from './fit-arrivals.js';
import { type Fit, fitCount, fitLognormal, fitTokens, meanCount, round } from './fit-dist.js';
import { FEW_ANSWERS, fitModel } from './fit-models.js';
import { fitPolicy, type PolicyDoc } from './fit-retry.js';
import { type FailureSource, faultPhases } from './fit-faults.js';
import type { Observations, RetryStats } from './observations.js';
import type { Reservoir } from './reservoir.js';
import type { ServeLog } from './serve-log.js';

/** Fewer samples than this at a layer are too few to fit a distribution well (said, not refused). */
export const FEW_SAMPLES = 20;

/** What was observed at one layer of the written scenario, for the fit report. */
export interface ObservedLayer {
  name: string;
  callsPerRoot: number;
  attemptsPerCall: number;
  latencyMs: { p50: number; p95: number; p99: number };
  samples: number;
}

export interface Observed {
  roots: number;
  layers: ObservedLayer[];
  tokens: { prompt: number; completion: number };
  /** Shares of upstream attempts: 429, 5xx, failures with no status (resets, timeouts), and every failure. */
  errors: { '429': number; '5xx': number; timeout: number; failed: number };
}

export interface Draft {
  /** The scenario document, in the order it is written. */
  doc: Record<string, unknown>;
  /** Comments: where the figures came from. */
  header: string[];
  /** How each part was fitted. */
  fits: string[];
  /** Approximations and what could not be derived: each a YAML comment and a line on stderr. */
  notes: string[];
  observed: Observed;
}

const percentiles = (r: Reservoir) => ({ p50: r.quantile(0.5), p95: r.quantile(0.95), p99: r.quantile(0.99) });

/** A `Dist` of times with its numbers as durations (`300ms`), as scenarios write them. */
function timeDist(d: Dist): unknown {
  const t = (ms: number) => formatDuration(round(ms));
  if (typeof d === 'number') return t(d);
  if (d.dist === 'lognormal') return { dist: 'lognormal', median: t(d.median), p99: t(d.p99) };
  if (d.dist === 'const') return { dist: 'const', value: t(d.value) };
  return d;
}

function countDist(d: Dist): Dist {
  if (typeof d === 'number') return Math.max(1, Math.round(d));
  if (d.dist === 'lognormal')
    return { dist: 'lognormal', median: Math.max(1, Math.round(d.median)), p99: Math.max(1, Math.round(d.p99)) };
  return d;
}

/** The client library the leaf's spans come from, by instrumentation scope, when one is known. */
function libraryOf(scopes: Map<string, number>): SdkName | undefined {
  let best = '';
  let n = -1;
  for (const [s, c] of scopes) if (c > n) [best, n] = [s, c];
  if (/openai/i.test(best)) return 'openai';
  if (/anthropic/i.test(best)) return 'anthropic';
  if (/langchain/i.test(best)) return 'langchain';
  if (best === 'ai' || /vercel/i.test(best)) return 'vercel-ai';
  return undefined;
}

function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'agent'
  );
}

function topName(names: Map<string, number>, fallback: string): string {
  let best = '';
  let n = 0;
  let total = 0;
  for (const [k, c] of names) {
    total += c;
    if (c > n) [best, n] = [k, c];
  }
  return total > 0 && n >= total / 2 ? slug(best) : fallback;
}

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10} %`;
}

/** The scenario the observations describe, with what was approximated said. */
export function derive(obs: Observations, name: string, serve?: ServeLog): Draft {
  const notes: string[] = [];
  const fits: string[] = [];
  const leaf = obs.leaf;
  const gen = obs.traces - obs.plainTraces;
  if (obs.genAiSpans === 0 || gen === 0)
    throw new CalibrateError(
      `${obs.files.join(', ')}: no GenAI spans in ${obs.spans} spans (none has gen_ai.operation.name, gen_ai.system / gen_ai.provider.name with a model, or an ai.* operation)`,
    );
  if (leaf.logical === 0)
    throw new CalibrateError(
      `${obs.files.join(', ')}: no model call spans (chat, embeddings, ai.*.doGenerate): nothing to simulate`,
    );
  if (obs.plainTraces > 0) notes.push(`${obs.plainTraces} traces had no GenAI span and were left out`);
  for (const [n, c] of obs.unknown)
    notes.push(`span kind not recognised: "${n}" (${c} spans): taken through (its children counted at its parent)`);
  if (obs.orphans > 0) notes.push(`${obs.orphans} spans whose parent was not in their trace were taken as tops of it`);
  if (obs.strayHttp > 0) notes.push(`${obs.strayHttp} HTTP client spans not under a model call were left out`);
  if (obs.lateSpans > 0)
    notes.push(
      `${obs.lateSpans} spans came after their trace had been closed (over 60 s after its last span) and were left out`,
    );

  // Levels: 0 is the root task (the trace); agents below. The deepest holds the model calls.
  const deepest = obs.levels.length - 1;
  const dropTop = obs.singleAgentTop === gen && deepest >= 1;
  const onlyModels = deepest === 0 && [...obs.level(0).modelKids.keys()].every((k) => k === 1);
  const used: number[] = [];
  if (!onlyModels) for (let l = dropTop ? 1 : 0; l <= deepest; l++) used.push(l);
  const names = new Set<string>();
  const unique = (n: string) => {
    let u = n;
    for (let i = 2; names.has(u); i++) u = `${n}-${i}`;
    names.add(u);
    return u;
  };
  const roots = obs.roots;
  const agentLevels = used.filter((l) => l > 0).length;
  const layers: Record<string, unknown>[] = [];
  const observedLayers: ObservedLayer[] = [];
  const tools: Record<string, unknown> = {};
  const variantSets: Record<string, unknown> = {};
  for (let i = 0; i < used.length; i++) {
    const l = used[i];
    const st = obs.level(l);
    const fallback = agentLevels >= 2 && l === 1 ? 'orchestrator' : 'agent';
    const layerName = unique(l === 0 ? 'task' : topName(st.names, fallback));
    const kids = l === deepest ? st.modelKids : st.agentKids;
    const fan = fitCount(kids);
    const layer: Record<string, unknown> = { name: layerName, fanout: fan.dist };
    fits.push(
      `layers[${i}] ${layerName}: fan-out ${fan.how} (mean ${round(meanCount(kids))} ${l === deepest ? 'model calls' : 'agents'} per call, ${st.spans} spans)`,
    );
    if (fan.zeros > 0)
      notes.push(
        `layers[${i}] ${layerName}: ${fan.zeros} calls started no ${l === deepest ? 'model call' : 'agent'}; a fan-out is at least 1, so they are given 1`,
      );
    if (l < deepest) {
      const m = meanCount(st.modelKids);
      if (m > 0)
        notes.push(
          `layers[${i}] ${layerName}: its own ${round(m)} model calls per call are left out (a scenario calls models from its last layer only)`,
        );
    }
    if (st.spans < FEW_SAMPLES) notes.push(`layers[${i}] ${layerName}: only ${st.spans} spans, too few for a good fit`);
    if (l > 0) {
      const p = fitPolicy(st.retry, undefined, `layers[${i}] ${layerName}`);
      layer.retry = p.policy;
      (p.approximate ? notes : fits).push(p.why);
      variantSets[`layers[${i}].retry`] = { policy: 'none' };
    }
    const several = st.sequential + st.parallel;
    if (st.sequential > st.parallel) {
      layer.sequential = true;
      fits.push(
        `layers[${i}] ${layerName}: children one after another (${st.sequential} of ${several} calls with several children)`,
      );
      if (st.parallel > 0)
        notes.push(
          `layers[${i}] ${layerName}: ${st.parallel} of ${several} calls ran some children at once; the layer runs them one after another`,
        );
    } else if (st.sequential > 0)
      notes.push(
        `layers[${i}] ${layerName}: ${st.sequential} of ${several} calls ran their children one after another; the layer starts them together`,
      );
    const calls: Record<string, unknown>[] = [];
    for (const [tool, t] of st.tools) {
      const per = t.calls / Math.max(1, st.spans);
      const toolName = slug(tool);
      if (per < 0.5) {
        notes.push(
          `layers[${i}] ${layerName}: tool ${tool} was called by ${pct(per)} of calls only; a layer's tool calls are made by every attempt, so it is left out`,
        );
        continue;
      }
      const latency = fitLognormal(t.latency);
      const service: Record<string, unknown> = { slots: 1024, queue: 1024, latency: timeDist(latency.dist) };
      const failShare = t.spans > 0 ? (t.spans - t.calls + t.failed) / t.spans : 0;
      if (failShare > 0) service.faults = [{ kind: 'errors', rate: round(Math.min(1, failShare)), status: 500 }];
      tools[toolName] = service;
      const call: Record<string, unknown> = { tool: toolName, sideEffect: false, calls: Math.max(1, Math.round(per)) };
      if (t.retry.failures > 0) {
        const p = fitPolicy(t.retry, undefined, `tool ${tool}`);
        call.retry = p.policy;
        (p.approximate ? notes : fits).push(p.why);
      }
      calls.push(call);
      fits.push(`tool ${tool}: ${round(per)} calls per ${layerName} call, latency ${latency.how}`);
      notes.push(`tool ${tool}: whether it has side effects cannot be seen in traces; sideEffect: false`);
    }
    if (calls.length > 0) layer.tools = calls;
    layers.push(layer);
    observedLayers.push({
      name: layerName,
      callsPerRoot: st.logical / roots,
      attemptsPerCall: st.logical === 0 ? 0 : st.spans / st.logical,
      latencyMs: percentiles(st.latency),
      samples: st.latency.count,
    });
  }
  // The model layer.
  const library = libraryOf(leaf.scopes);
  const policy = fitPolicyLeaf(leaf.retry, library, `layers[${layers.length}] llm`, notes, fits);
  const modelNames = [...obs.models.entries()].sort((a, b) => b[1].logical - a[1].logical).map(([n]) => n);
  const llmName = unique('llm');
  const llm: Record<string, unknown> = { name: llmName, retry: policy, models: [modelNames[0]] };
  if (modelNames.length > 1)
    notes.push(
      `model calls went to ${modelNames.length} models (${modelNames.join(', ')}); the llm layer calls ${modelNames[0]}, the most called (a scenario's layer calls one model, the rest being fallbacks)`,
    );
  if (leaf.streamed > leaf.logical / 2) llm.stream = true;
  layers.push(llm);
  variantSets[`layers[${layers.length - 1}].retry`] = { policy: 'engine' };
  const deepestModelCalls = [...obs.level(deepest).modelKids].reduce((s, [k, c]) => s + k * c, 0);
  observedLayers.push({
    name: llmName,
    callsPerRoot: (onlyModels ? leaf.logical : deepestModelCalls) / roots,
    attemptsPerCall: leaf.attempts / leaf.logical,
    latencyMs: percentiles(leaf.latency),
    samples: leaf.latency.count,
  });
  if (leaf.logical < FEW_SAMPLES)
    notes.push(`layers[${layers.length - 1}] llm: only ${leaf.logical} model calls, too few for a good fit`);

  // Arrivals and time range.
  const arrivals = fitArrivals(obs.rootStart, obs.rootEnd, obs.roots);
  fits.push(`arrival: ${arrivals.why}`);
  if (arrivals.drift !== undefined) notes.push(arrivals.drift);
  // A loop, not Math.min(...): a spread of 200,000 roots overflows the stack.
  let t0 = Number.POSITIVE_INFINITY;
  for (let i = 0; i < obs.roots; i++) if (obs.rootStart[i] < t0) t0 = obs.rootStart[i];
  const rootP99 = obs.level(0).latency.quantile(0.99);
  const drainMs = Math.max(30_000, Math.ceil((2 * rootP99) / 1000) * 1000);

  // Tokens.
  const tokens = tokenFits(obs, notes, fits);

  // Models: service time, capacity, faults.
  const durationS = arrivals.durationMs / 1000;
  const models: Record<string, unknown>[] = [];
  for (const n of modelNames) {
    const m = obs.models.get(n)!;
    const f = fitModel(m);
    fits.push(`model ${n}: ${f.how}`);
    if (m.answers.count < FEW_ANSWERS)
      notes.push(`model ${n}: only ${m.answers.count} answers with their output tokens, too few for a good fit`);
    if (m.untokened > 0)
      notes.push(`model ${n}: ${m.untokened} answers had no output token count and were left out of its service time`);
    const meanMs = m.answers.count > 0 ? m.answers.mean() : 1000;
    const inFlight = (m.attempts / Math.max(1, durationS)) * (meanMs / 1000);
    const slots = Math.max(64, Math.ceil(4 * inFlight));
    models.push({ name: n, slots, queue: slots, ttft: timeDist(f.ttft), tpot: timeDist(f.tpot) });
  }
  notes.push(
    `upstream capacity cannot be seen in traces: each model gets 4× the attempts it had in flight on average (at least 64 slots), so capacity does not limit it unless a fault is added`,
  );
  const failures = failureSource(obs, modelNames, serve, notes, fits);
  const faults = faultPhases(failures, t0, arrivals.durationMs);
  for (const f of faults.notes) notes.push(f);
  fits.push(...faults.fits);

  const doc: Record<string, unknown> = {
    name,
    description: `Calibrated from ${obs.traces} traces (${obs.spans} spans) by stormlab calibrate.`,
    seed: 1,
    duration: formatDuration(arrivals.durationMs),
    drain: formatDuration(drainMs),
    arrival:
      arrivals.arrival.type === 'closed'
        ? { type: 'closed', users: arrivals.arrival.users, think: timeDist(arrivals.arrival.think) }
        : arrivals.arrival,
    tokens,
    layers,
    ...(Object.keys(tools).length > 0 ? { tools } : {}),
    upstream: { cancelOnDisconnect: false, models, ...(faults.phases.length > 0 ? { faults: faults.phases } : {}) },
    variants: { naive: {}, engine: variantSets },
  };
  const header = [
    `calibrated by stormlab calibrate from ${obs.files.join(', ')}`,
    `${obs.spans} spans (${obs.genAiSpans} GenAI) in ${obs.traces} traces, ${roots} root tasks, from ${new Date(obs.first).toISOString()} to ${new Date(obs.last).toISOString()} (${((obs.last - obs.first) / 1000).toFixed(1)} s)`,
    ...(serve === undefined
      ? []
      : [`the upstream's errors from ${serve.files.join(', ')} (stormlab serve --log: ${serve.requests} requests)`]),
    'only the attributes the fit needs were read: no prompt, completion or tool argument text is in this file',
    'variants: naive = the retries as observed; engine = retry at the model layer only, through the engine',
  ];
  const observed: Observed = {
    roots,
    layers: observedLayers,
    tokens: { prompt: leaf.tokensIn, completion: leaf.tokensOut },
    errors: errorShares(failures.statuses),
  };
  return { doc, header, fits, notes, observed };
}

function fitPolicyLeaf(
  r: RetryStats,
  library: SdkName | undefined,
  where: string,
  notes: string[],
  fits: string[],
): PolicyDoc {
  const p = fitPolicy(r, library, where);
  (p.approximate ? notes : fits).push(p.why);
  if (r.httpRetries > 0 && r.siblingRetries > 0)
    notes.push(
      `${where}: retries of both shapes (a loop over the client's own): one policy per layer, fitted to all attempts`,
    );
  return p.policy;
}

function tokenFits(obs: Observations, notes: string[], fits: string[]): { prompt: Dist; completion: Dist } {
  const leaf = obs.leaf;
  const tokenFit = (r: Reservoir, what: string, assumed: number): Dist => {
    if (r.count === 0) {
      notes.push(`${what} tokens: no usage recorded on any model call; ${assumed} assumed`);
      return assumed;
    }
    const f: Fit = fitTokens(r);
    fits.push(`tokens.${what}: ${f.how} over ${r.count} model calls`);
    return countDist(f.dist);
  };
  const prompt = tokenFit(leaf.inTok, 'prompt', 500);
  const completion = tokenFit(leaf.outTok, 'completion', 150);
  if (leaf.untokened > 0 && leaf.untokened < leaf.logical)
    notes.push(`${leaf.untokened} successful model calls had no usage recorded`);
  if (obs.models.size > 1) notes.push('token counts are one distribution for every model (a scenario has one)');
  return { prompt, completion };
}

/**
 * Where the upstream's failures are read from: the traces' attempts, or — given a
 * `serve --log` — the server's own record of the same models' requests (every status, resets
 * included, whatever the client's instrumentation kept). Says which, and how the two agree.
 */
function failureSource(
  obs: Observations,
  modelNames: string[],
  serve: ServeLog | undefined,
  notes: string[],
  fits: string[],
): FailureSource {
  const traced: FailureSource = {
    statuses: [...obs.models.values()].map((m) => m.statuses),
    bins: obs.bins,
    noStatus: 'a reset or a timeout, error.type only',
  };
  if (serve === undefined) return traced;
  const served = modelNames.map((n) => serve.models.get(n)).filter((m) => m !== undefined);
  const others = [...serve.models.keys()].filter((n) => !modelNames.includes(n));
  if (others.length > 0)
    notes.push(
      `${serve.files.join(', ')}: requests for ${others.join(', ')} (a model no trace called) were left out of the errors and fault phases`,
    );
  if (served.length === 0) {
    notes.push(`${serve.files.join(', ')}: no request for a model the traces called; errors are the traces'`);
    return traced;
  }
  const requests = served.reduce((s, m) => s + m.requests, 0);
  const attempts = modelNames.reduce((s, n) => s + (obs.models.get(n)?.attempts ?? 0), 0);
  fits.push(
    `upstream errors: from ${serve.files.join(', ')}, the server's own statuses of ${requests} requests (the traces had ${attempts} attempts)`,
  );
  if (Math.abs(requests - attempts) > 0.01 * Math.max(requests, attempts))
    notes.push(
      `${serve.files.join(', ')}: ${requests} requests at the server, ${attempts} attempts in the traces: other clients' requests are in the log, or the traces were sampled; the errors are the server's`,
    );
  for (const n of modelNames) {
    const m = serve.models.get(n);
    const t = obs.models.get(n);
    if (m === undefined || t === undefined || m.latency.count === 0 || t.answers.count === 0) continue;
    const atServer = m.latency.quantile(0.5);
    const inSpans = t.answers.quantile(0.5);
    fits.push(
      `model ${n}: at the server p50 ${round(atServer)} ms, p95 ${round(m.latency.quantile(0.95))} ms; in the spans p50 ${round(inSpans)} ms — the ${round(Math.max(0, inSpans - atServer))} ms between is the client's and the network's, kept in the model's time (the layers see what the program saw)`,
    );
  }
  const bins = new Map<number, [number, number]>();
  for (const m of served)
    for (const [k, [n, f]] of m.bins) {
      const b = bins.get(k);
      if (b === undefined) bins.set(k, [n, f]);
      else {
        b[0] += n;
        b[1] += f;
      }
    }
  return {
    statuses: served.map((m) => m.statuses),
    bins,
    noStatus: 'no answer written: a reset, or the client gone first',
  };
}

function errorShares(statuses: Iterable<ReadonlyMap<string, number>>): Observed['errors'] {
  let total = 0;
  let r429 = 0;
  let r5xx = 0;
  let none = 0;
  let failed = 0;
  for (const m of statuses)
    for (const [s, c] of m) {
      total += c;
      if (s === 'error' || Number(s) >= 400) failed += c;
      if (s === '429') r429 += c;
      else if (s === 'error') none += c;
      else if (Number(s) >= 500) r5xx += c;
    }
  const share = (x: number) => (total === 0 ? 0 : x / total);
  return { '429': share(r429), '5xx': share(r5xx), timeout: share(none), failed: share(failed) };
}
