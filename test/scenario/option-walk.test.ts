import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';

// No ignored option: every engine and layer field the JSON Schema (generated from the loader's
// own schema) accepts either changes the simulated result or is refused by the loader. The
// walk finds the fields; the tables below give each a non-default value and, where a field
// only matters somewhere (a stream limit on a streamed layer), the context that makes it
// matter. A field the schema gains without an entry here fails the test, so does an entry the
// schema has lost, so does a field that is accepted and changes nothing.

interface JsonNode {
  properties?: Record<string, JsonNode>;
  items?: JsonNode;
  anyOf?: JsonNode[];
  oneOf?: JsonNode[];
}

/** Every place a value is written under `node`: `engine.breaker.openMs`, `layers[].tools[].tool`. */
function fields(node: JsonNode, path: string, out: string[] = []): string[] {
  const options = node.anyOf ?? node.oneOf ?? [];
  // A value of its own: no structure at all, or one of its shapes is a plain value (`breaker: false`).
  let leaf = options.length === 0 && node.properties === undefined && node.items === undefined;
  for (const o of [node, ...options]) {
    if (o.properties) for (const [k, v] of Object.entries(o.properties)) fields(v, `${path}.${k}`, out);
    else if (o.items) fields(o.items, `${path}[]`, out);
    else if (o !== node) leaf = true;
  }
  if (leaf) out.push(path);
  return out;
}

const schema = JSON.parse(readFileSync(new URL('../../scenario.schema.json', import.meta.url), 'utf8')) as {
  properties: { engine: JsonNode; layers: JsonNode };
};
const walked = [
  ...fields(schema.properties.engine, 'engine'),
  ...fields(schema.properties.layers.items as JsonNode, 'layers[]'),
];

/**
 * Two engine layers (agent → llm) over a small, overloaded upstream with 429s and 503s, a full
 * outage and slow stalls, two tenants, and a tool call with its own engine that loses answers
 * and goes down: every engine mechanism has something to do.
 */
const BASE = `
name: walk
seed: 3
duration: 30s
drain: 30s
arrival: { type: poisson, rate: 10 }
deadline: 12s
tokens: { prompt: { dist: lognormal, median: 300, p99: 3000 }, completion: 60 }
tenants: [{ name: a, weight: 1 }, { name: b, weight: 2 }]
layers:
  - name: agent
    fanout: 2
    retry: { policy: engine }
    tools:
      - { tool: crm.update, sideEffect: true, timeout: 1s, retry: { policy: engine } }
  - name: llm
    retry: { policy: engine }
    models: [primary]
tools:
  crm.update:
    slots: 8
    queue: 16
    latency: { dist: lognormal, median: 200ms, p99: 1500ms }
    faults:
      - { kind: lost, from: 1s, to: 4s, rate: 0.3 }
      - { kind: errors, from: 4s, to: 8s, rate: 0.5, status: 429 }
      - { kind: outage, from: 22s, to: 30s, status: 503 }
  mail.send: { latency: 100ms }
upstream:
  models:
    - { name: primary, slots: 24, queue: 24, ttft: { dist: lognormal, median: 300ms, p99: 2s }, tpot: 10ms }
    - { name: secondary, slots: 64, queue: 64, ttft: 500ms, tpot: 10ms }
  faults:
    - { kind: errors, from: 3s, to: 8s, rate: 0.4, status: { 429: 0.5, 503: 0.5 } }
    - { kind: outage, from: 9s, to: 21s, status: 503 }
    - { kind: stall, from: 3s, to: 8s, rate: 0.2, after: 5, for: 3s }
variants: { as-written: {} }
`;

/** Where an engine block sits: its prefix, and the layer whose calls it guards (`tool`: the agent's tool call). */
interface Place {
  prefix: string;
  layer: 1 | 'tool';
}
const PLACES: Record<string, Place> = {
  engine: { prefix: 'engine.', layer: 1 },
  'layers[].retry.engine': { prefix: 'layers[1].retry.engine.', layer: 1 },
  'layers[].tools[].retry.engine': { prefix: 'layers[0].tools[0].retry.engine.', layer: 'tool' },
};

interface Case {
  /** The value to set, as `--set` takes it. */
  value: string;
  /** More `--set`s, in the baseline too: what makes the field matter. */
  context?: (p: Place) => string[];
  /** The loader refuses it here, with a line naming the field. */
  refused?: (p: Place) => boolean;
}

/** A breaker that trips: half the calls failing over 5 s, from 5 calls on. */
const TRIPPING = (p: Place) => [
  `${p.prefix}breaker.failureRatio=0.5`,
  `${p.prefix}breaker.minimumCalls=5`,
  `${p.prefix}breaker.windowMs=5s`,
];
/** A throttle that drops: K = 1.5 over a 10 s window. */
const THROTTLING = (p: Place) => [`${p.prefix}throttle.k=1.5`, `${p.prefix}throttle.windowMs=10s`];
const LIMIT = (p: Place) => [`${p.prefix}limits=[{name: rps, unit: requests, rate: 6, per: second}]`];
const CONCURRENCY = (p: Place) => [`${p.prefix}concurrency={maxInFlight: 3, maxQueue: 3, maxWaitMs: 300ms}`];
const STREAMED = (p: Place) => (p.layer === 1 ? ['layers[1].stream=true'] : []);
const ON_A_TOOL = (p: Place) => p.layer === 'tool';
/**
 * A tool call's engine refusing it is final for the agent's engine (not worth retrying, as for a
 * model call): a naive agent runs its steps again, so the tool's engine sees more calls to judge.
 */
const REDRIVEN = (p: Place) => (p.layer === 'tool' ? ['layers[0].retry={policy: naive, attempts: 3}'] : []);

/** The engine options, relative to an engine block. */
const ENGINE: Record<string, Case> = {
  profile: { value: 'core' },
  maxAttempts: { value: '1' },
  'backoff.strategy': { value: 'exponential' },
  'backoff.baseMs': { value: '50ms' },
  'backoff.capMs': { value: '600ms' },
  'backoff.multiplier': { value: '4' },
  retryBudget: { value: 'false' },
  'retryBudget.ratio': { value: '0.01' },
  'retryBudget.windowMs': { value: '1s', context: (p) => [`${p.prefix}retryBudget.ratio=0.05`] },
  'retryBudget.buckets': { value: '2', context: (p) => [`${p.prefix}retryBudget.ratio=0.05`, ...REDRIVEN(p)] },
  'retryBudget.minRetriesPerSec': { value: '0', context: (p) => [`${p.prefix}retryBudget.ratio=0.05`] },
  throttle: { value: 'false', context: THROTTLING },
  'throttle.k': { value: '1.1' },
  'throttle.windowMs': { value: '5s' },
  'throttle.buckets': { value: '3', context: (p) => [...THROTTLING(p), ...REDRIVEN(p)] },
  'throttle.maxDropProbability': { value: '0.3', context: (p) => [...THROTTLING(p), ...REDRIVEN(p)] },
  'throttle.minRequests': { value: '500', context: THROTTLING },
  breaker: { value: 'false', context: TRIPPING },
  'breaker.windowMs': { value: '3s' },
  'breaker.buckets': { value: '1', context: TRIPPING },
  'breaker.minimumCalls': {
    value: '200',
    context: (p) => [`${p.prefix}breaker.failureRatio=0.5`, `${p.prefix}breaker.windowMs=5s`],
  },
  'breaker.failureRatio': { value: '0.2' },
  'breaker.slowCallRatio': { value: '0.1', context: (p) => [`${p.prefix}breaker.slowCallMs=500ms`] },
  'breaker.slowCallMs': { value: '300ms', context: (p) => [`${p.prefix}breaker.slowCallRatio=0.2`] },
  'breaker.throttledRatio': { value: '0.1' },
  'breaker.openMs': { value: '8s', context: TRIPPING },
  'breaker.openBackoffMultiplier': { value: '1', context: TRIPPING },
  'breaker.maxOpenMs': { value: '20s', context: (p) => [...TRIPPING(p), `${p.prefix}breaker.openMs=1s`] },
  // Probes close a breaker only where the layer above lets them succeed: not the agent's,
  // whose probes need both of their model calls through the model layer's own probing breaker.
  'breaker.halfOpenProbes': {
    value: '10',
    context: (p) => [...TRIPPING(p), ...(p.prefix === 'engine.' ? ['layers[0].retry.engine.breaker=false'] : [])],
  },
  // A limit's name is what tells two limits apart: a second one of the same name is refused.
  'limits[].name': {
    value: 'rps',
    context: (p) => [
      `${p.prefix}limits=[{name: tpm, unit: tokens, rate: 100000, per: minute}, {name: rps, unit: requests, rate: 6, per: second}]`,
    ],
    refused: () => true,
  },
  'limits[].unit': { value: 'tokens', context: LIMIT },
  'limits[].rate': { value: '2', context: LIMIT },
  'limits[].per': { value: 'minute', context: LIMIT },
  'limits[].burst': { value: '1', context: LIMIT },
  'limits[].keyBy': { value: 'tenant', context: LIMIT },
  concurrency: { value: '{maxInFlight: 2}' },
  'concurrency.maxInFlight': { value: '1', context: CONCURRENCY },
  'concurrency.maxQueue': { value: '0', context: CONCURRENCY },
  'concurrency.maxWaitMs': { value: '2s', context: CONCURRENCY },
  minAttemptMs: { value: '10s' },
  state: {
    value: 'shared',
    context: (p) => [...(p.layer === 1 ? ['layers[1].replicas=3'] : []), ...LIMIT(p)],
    refused: ON_A_TOOL,
  },
  'stream.firstToken': { value: '200ms', context: STREAMED, refused: ON_A_TOOL },
  'stream.idle': { value: '500ms', context: STREAMED, refused: ON_A_TOOL },
  'stream.headers': { value: '150ms', context: STREAMED, refused: ON_A_TOOL },
  // Matters once a stall after the first token is abandoned: retried whole, or the caller's answer ends.
  'stream.commit': {
    value: 'complete',
    context: (p) => (p.layer === 1 ? [...STREAMED(p), `${p.prefix}stream.idle=500ms`] : []),
    refused: ON_A_TOOL,
  },
  // Matters once a stall after the first token is abandoned on a model that continues prefills.
  'stream.resume': {
    value: 'false',
    context: (p) =>
      p.layer === 1 ? [...STREAMED(p), `${p.prefix}stream.idle=500ms`, 'upstream.models[0].continuation=prefill'] : [],
    refused: ON_A_TOOL,
  },
  headersTimeoutMs: { value: '800ms', refused: ON_A_TOOL },
  // A model target's own stream limits (the last layer calls `primary`): a tool call has no model targets.
  targets: { value: '{primary: {stream: {firstToken: 200ms}}}', context: STREAMED, refused: ON_A_TOOL },
};

/** A `retry:` mapping's own fields, at `at` (`layers[1].retry`), for each policy. */
function retryCases(at: string): Record<string, Case> {
  const naive = () => [`${at}.policy=naive`];
  const sdk = () => [`${at}.policy=sdk`];
  return {
    policy: { value: 'naive' },
    attempts: { value: '2', context: naive },
    'backoff.strategy': { value: 'full_jitter', context: naive },
    'backoff.baseMs': { value: '1s', context: naive },
    'backoff.capMs': { value: '150ms', context: naive },
    'backoff.multiplier': { value: '5', context: naive },
    sdk: { value: 'vercel-ai', context: sdk },
    maxRetries: { value: '0', context: sdk },
    runnerRetries: { value: '2', context: () => [`${at}.policy=sdk`, `${at}.sdk=openai-agents`] },
  };
}

/** The layer fields that are not an engine block (layer 1 is the model layer, 0 the agent with the tool call). */
const LAYER: Record<string, Case> = {
  name: { value: 'planner' },
  fanout: { value: '3' },
  sequential: { value: 'true' },
  timeout: { value: '1s' },
  replicas: { value: '4' },
  ...prefixed('retry.', retryCases('layers[1].retry')),
  'models[]': { value: '[primary, secondary]' },
  stream: { value: 'true' },
  'tools[].kind': { value: 'tools', refused: () => true },
  'tools[].tool': { value: 'mail.send' },
  'tools[].sideEffect': { value: 'false' },
  'tools[].calls': { value: '2' },
  'tools[].timeout': { value: '300ms' },
  ...prefixed('tools[].retry.', retryCases('layers[0].tools[0].retry')),
  'tools[].idempotency': { value: 'false' },
  'tools[].degrade': { value: 'draft' },
  'tools[].stage': { value: 'send', context: () => ['stages={send: 400ms}'] },
  'inference.maxInFlight': { value: '4' },
  'inference.maxQueue': { value: '0', context: () => ['layers[1].inference={maxInFlight: 4}'] },
  'inference.maxWait': { value: '50ms', context: () => ['layers[1].inference={maxInFlight: 4}'] },
  'inference.fallback': {
    value: 'secondary',
    context: () => ['layers[1].inference={maxInFlight: 4, maxWait: 100ms}', 'layers[1].models=[primary, secondary]'],
  },
  stage: { value: 'think', context: () => ['stages={think: 2s}'] },
  partial: { value: 'true', context: () => ['stages={think: 2s}', 'layers[0].stage=think'] },
};

/** Where each layer field is set: the layer that has it (the tool call and stages on the agent, the rest on the model layer). */
function layerPath(field: string): string {
  if (field.startsWith('tools[].')) return `layers[0].tools[0].${field.slice('tools[].'.length)}`;
  if (field === 'name' || field === 'fanout' || field === 'sequential' || field === 'stage' || field === 'partial')
    return `layers[0].${field}`;
  if (field === 'replicas') return 'layers[0].replicas';
  if (field === 'models[]') return 'layers[1].models';
  return `layers[1].${field}`;
}

function prefixed(prefix: string, cases: Record<string, Case>): Record<string, Case> {
  return Object.fromEntries(Object.entries(cases).map(([k, v]) => [prefix + k, v]));
}

/** Every walked field with the `--set`s of its baseline and of its change. */
function plan(field: string): { set: string; context: string[]; refused: boolean } | undefined {
  for (const [place, p] of Object.entries(PLACES)) {
    if (!field.startsWith(`${place}.`)) continue;
    const rel = field.slice(place.length + 1);
    const c = ENGINE[rel];
    if (c === undefined) return undefined;
    const path = p.prefix + rel.replace('[]', '[0]');
    return { set: `${path}=${c.value}`, context: c.context?.(p) ?? [], refused: c.refused?.(p) ?? false };
  }
  const rel = field.slice('layers[].'.length);
  const c = LAYER[rel];
  if (c === undefined) return undefined;
  return {
    set: `${layerPath(rel)}=${c.value}`,
    context: c.context?.(PLACES.engine) ?? [],
    refused: c.refused?.(PLACES.engine) ?? false,
  };
}

/** The simulated result as JSON, or the loader's refusal. */
function outcome(set: string[]): { json: string } | { refused: string } {
  let s: ReturnType<typeof loadScenario>;
  try {
    s = loadScenario(BASE, { set, variant: 'as-written' });
  } catch (e) {
    if (e instanceof ScenarioError) return { refused: e.problems.join('\n') };
    throw e;
  }
  const sim = new Simulation({
    name: 'walk',
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  });
  return { json: JSON.stringify(sim.run()) };
}

const baselines = new Map<string, ReturnType<typeof outcome>>();
function baseline(context: string[]): ReturnType<typeof outcome> {
  const key = context.join('\n');
  let b = baselines.get(key);
  if (b === undefined) baselines.set(key, (b = outcome(context)));
  return b;
}

describe('every engine and layer field of the schema changes the run or is refused', () => {
  it('the walk finds the fields, and every one has a case here (and every case a field)', () => {
    expect(walked.length).toBeGreaterThan(150);
    expect(walked.filter((f) => plan(f) === undefined)).toEqual([]);
    const known = new Set(
      walked.map((f) => f.replace(/^layers\[\]\.(retry\.engine|tools\[\]\.retry\.engine)\./, 'engine.')),
    );
    const stale = [
      ...Object.keys(ENGINE).filter((k) => !known.has(`engine.${k}`)),
      ...Object.keys(LAYER).filter((k) => !walked.includes(`layers[].${k}`)),
    ];
    expect(stale).toEqual([]);
  });

  it.each(walked)('%s', (field) => {
    const p = plan(field)!;
    const before = baseline(p.context);
    expect(before, `the baseline of ${field} loads`).toHaveProperty('json');
    const after = outcome([...p.context, p.set]);
    if (p.refused) {
      expect(after, `${p.set} is refused`).toHaveProperty('refused');
      const path = p.set.slice(0, p.set.indexOf('='));
      expect((after as { refused: string }).refused).toContain(path.replace(/\.[^.[]+$/, ''));
      return;
    }
    expect(after, `${p.set} loads`).toHaveProperty('json');
    expect((after as { json: string }).json !== (before as { json: string }).json, `${p.set} changes the result`).toBe(
      true,
    );
  });
});
