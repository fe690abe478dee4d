import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/run/metrics/result.js';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { MAX_SERIAL } from '../../src/traffic/call-driver.js';

/**
 * Model calls and tool calls go through one `CallDriver`: each behaviour below is checked on
 * both kinds with the same scenario, once with the behaviour at the model call (the `llm`
 * layer) and once at the tool call (`search`), the other one plain.
 */
type Kind = 'model call' | 'tool call';
const KINDS: Kind[] = ['model call', 'tool call'];

/** An agent over an LLM; each agent attempt makes one `search` tool call after its model call. */
function scenario(kind: Kind, o: { agent: string; under: string; modelFault?: string; toolFault?: string }): string {
  const plain = '{ policy: none }';
  return `
name: kinds
duration: 2s
drain: 120s
arrival: { type: constant, rate: 10 }
deadline: 60s
tokens: { prompt: 10, completion: 10 }
layers:
  - name: agent
    retry: ${o.agent}
    tools: [{ kind: tool, tool: search, sideEffect: true, retry: ${kind === 'tool call' ? o.under : plain} }]
  - { name: llm, retry: ${kind === 'model call' ? o.under : plain} }
tools:
  search: { slots: 64, queue: 64, latency: 200ms, faults: [${kind === 'tool call' ? (o.toolFault ?? '') : ''}] }
upstream:
  models: [{ name: m, slots: 64, queue: 64, ttft: 200ms, tpot: 0ms }]
  faults: [${kind === 'model call' ? (o.modelFault ?? '') : ''}]
variants: { only: {} }
`;
}

function run(text: string, firstSerial?: number): RunResult {
  const s = loadScenario(text, { variant: 'only' });
  return new Simulation({ ...s, name: 'only' }, { firstSerial }).run();
}

/** The figures of the kind under test: attempts, retries, sheds, calls failed and their p99 duration. */
function under(r: RunResult, kind: Kind) {
  if (kind === 'model call') {
    const l = r.layers[1];
    return { attempts: l.attempts, retries: l.retries, shed: l.shed, failed: l.failed, p99: l.latencyMs.p99 };
  }
  const t = r.tools![0];
  return { attempts: t.attempts, retries: t.retries, shed: t.shed, failed: t.failed, p99: t.latencyMs.p99 };
}

describe.each(KINDS)('one call driver: a %s', (kind) => {
  it('refused by its engine reaches its parent as not worth retrying (an SDK parent does not retry it)', () => {
    // One attempt in flight and no queue: of 20 calls arriving every 100 ms, each lasting 200 ms, half are refused.
    const r = run(
      scenario(kind, {
        agent: '{ policy: sdk }',
        under: '{ policy: engine, engine: { concurrency: { maxInFlight: 1, maxQueue: 0 } } }',
      }),
    );
    const u = under(r, kind);
    expect(u.shed.concurrency).toBeGreaterThan(0);
    // The agent's SDK loop honours x-should-retry: false, as it does for any refusal below it.
    expect(r.layers[0].retries).toBe(0);
    expect(r.roots.failed).toBe(u.shed.concurrency);
  });

  it('under the engine never outlives the deadline it was handed, though its target never answers', () => {
    const hang = '{ kind: hang }';
    const r = run(
      scenario(kind, {
        agent: '{ policy: none }',
        under: '{ policy: engine }',
        modelFault: hang,
        toolFault: hang,
      }).replace('deadline: 60s', 'deadline: 5s'),
    );
    const u = under(r, kind);
    expect(u.failed).toBe(20);
    // Every call (its p99 and every root, whose latency is the call's plus the model call before a tool call) within 5 s.
    expect(u.p99).toBeLessThanOrEqual(5000);
    expect(u.p99).toBeGreaterThanOrEqual(4500);
    expect(r.roots.failed).toBe(20);
    expect(r.roots.latencyMs.max).toBeLessThanOrEqual(5000);
  });

  it('counts its attempts and retries the same way: naive attempts 3 against a failing target, 3 attempts per call, 2 retries', () => {
    const r = run(
      scenario(kind, {
        agent: '{ policy: none }',
        under: '{ policy: naive, attempts: 3 }',
        modelFault: '{ kind: errors, rate: 1, status: 503 }',
        toolFault: '{ kind: errors, rate: 1, status: 503 }',
      }),
    );
    const u = under(r, kind);
    expect(u.attempts).toBe(60);
    expect(u.retries).toBe(40);
    expect(u.failed).toBe(20);
  });
});

describe.each(KINDS)('one call driver: a staged %s', (kind) => {
  // The target is slow and fails half the time; the stage's budget is 700 ms, from the call's start.
  const staged = (policy: string): string =>
    scenario(kind, {
      agent: '{ policy: none }',
      under: policy,
      modelFault: '{ kind: errors, rate: 0.5, status: 503 }',
      toolFault: '{ kind: errors, rate: 0.5, status: 503 }',
    })
      .replace('deadline: 60s', 'deadline: 60s\nstages: { act: 700ms }')
      .replace('ttft: 200ms', 'ttft: { dist: lognormal, median: 300ms, p99: 3s }')
      .replace('latency: 200ms', 'latency: { dist: lognormal, median: 300ms, p99: 3s }')
      .replace(kind === 'model call' ? '{ name: llm,' : 'sideEffect: true,', (m) => `${m} stage: act,`);

  it.each(['{ policy: none }', '{ policy: naive, attempts: 5 }', '{ policy: sdk }', '{ policy: engine }'])(
    'under %s never outlives its stage: its attempts cut to what is left, no retry past it',
    (policy) => {
      const s = loadScenario(staged(policy), { variant: 'only' });
      const sim = new Simulation({ ...s, name: 'only' });
      let worst = -Infinity;
      let ended = 0;
      if (kind === 'model call') {
        const callDone = sim.metrics.callDone.bind(sim.metrics);
        sim.metrics.callDone = (layer, start, t, ok) => {
          if (layer === 1) [ended, worst] = [ended + 1, Math.max(worst, t - start - 700)];
          callDone(layer, start, t, ok);
        };
      } else {
        const toolDone = sim.metrics.toolDone.bind(sim.metrics);
        sim.metrics.toolDone = (tool, start, t, outcome) => {
          [ended, worst] = [ended + 1, Math.max(worst, t - start - 700)];
          toolDone(tool, start, t, outcome);
        };
      }
      const r = sim.run();
      expect(ended).toBe(20);
      expect(worst).toBeLessThanOrEqual(1e-6);
      // The budget bites: some calls end failed on it that the same policy without a stage finishes later.
      const unstaged = run(staged(policy).replace(' stage: act,', ''));
      expect(under(r, kind).failed).toBeGreaterThan(0);
      expect(JSON.stringify(under(r, kind))).not.toBe(JSON.stringify(under(unstaged, kind)));
    },
  );

  it('names an unknown stage in one line, where it is', () => {
    const text = staged('{ policy: none }').replace('stage: act,', 'stage: actt,');
    const where = kind === 'model call' ? 'layers[1].stage' : 'layers[0].tools[0].stage';
    expect(() => loadScenario(text)).toThrow(ScenarioError);
    expect(() => loadScenario(text)).toThrow(`${where}: unknown stage "actt" (known: act)`);
  });
});

describe('one serial count for both kinds', () => {
  // Timeouts on both kinds, retries on both, a tool that hangs and an upstream that errors: every
  // attempt's timer must find its attempt by serial, and every stale one must be ignored.
  const text = scenario('tool call', {
    agent: '{ policy: naive, attempts: 3 }',
    under: '{ policy: engine }',
    toolFault: '{ kind: hang, rate: 0.5 }',
  })
    .replace('sideEffect: true,', 'sideEffect: true, timeout: 300ms,')
    .replace(
      '{ name: llm, retry: { policy: none } }',
      '{ name: llm, timeout: 150ms, retry: { policy: naive, attempts: 2 } }',
    )
    .replace('ttft: 200ms', 'ttft: { dist: lognormal, median: 100ms, p99: 400ms }');

  it('a run is the same to the byte whatever serial the count starts at, across its wrap', () => {
    const from1 = run(text);
    expect(from1.tools![0].share.timeout).toBeGreaterThan(0);
    expect(from1.layers[1].retries).toBeGreaterThan(0);
    const nearWrap = run(text, MAX_SERIAL - 40);
    expect(JSON.stringify(nearWrap)).toBe(JSON.stringify(from1));
  });
});
