import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/run/metrics/result.js';
import {
  WARM_UP,
  amplificationOver,
  bundledText,
  goodputOver,
  phase,
  runAll,
  runSeconds,
  worstWindow,
  type Runs,
} from './claims.js';

// Each bundled scenario's header says what a user will see; these tests hold the scenario to
// it, with margins (the figures in the headers are what seed 1 gives; the bounds here are what
// the claim needs). Every run is simulated, so each result is the same on every machine.

/** Runs are memoised per scenario and `--set` flags: several tests look at the same runs. */
const cache = new Map<string, Runs>();
function runs(name: string, set: string[] = []): Runs {
  const key = `${name}\n${set.join('\n')}`;
  let r = cache.get(key);
  if (r === undefined) {
    r = runAll(name, set);
    cache.set(key, r);
  }
  return r;
}

function layer(r: RunResult, name: string) {
  const l = r.layers.find((x) => x.name === name);
  expect(l, `layer ${name}`).toBeDefined();
  return l!;
}

function model(r: RunResult, name: string) {
  const m = r.upstream.models.find((x) => x.name === name);
  expect(m, `model ${name}`).toBeDefined();
  return m!;
}

describe('retry-storm: 3 × 3 × 3 naive retries under a full outage', () => {
  it('naive: exactly 27.0× at the leaf (3× and 9× above it), nothing succeeds', () => {
    const { naive } = runs('retry-storm').results;
    expect(naive.amplification).toBe(27);
    expect(['orchestrator', 'agent', 'llm'].map((n) => layer(naive, n).amplification)).toEqual([3, 9, 27]);
    expect(naive.upstream.attempts).toBe(27 * layer(naive, 'llm').logicalCalls);
    expect(naive.successRate).toBe(0);
  });

  it('engine: at most 1.1× (in fact next to nothing: throttles and the breaker shed it)', () => {
    const { naive, engine } = runs('retry-storm').results;
    expect(engine.amplification).toBeLessThanOrEqual(1.1);
    expect(engine.upstream.attempts).toBeLessThan(naive.upstream.attempts / 100);
    const shed = (reason: 'throttle' | 'breaker') => engine.layers.reduce((n, l) => n + (l.shed[reason] ?? 0), 0);
    expect(shed('breaker')).toBeGreaterThan(0);
    expect(shed('throttle')).toBeGreaterThan(0);
  });
});

describe.each([[[] as string[]], [['upstream.faults[0].rate=0.5']]])('brownout %j', (set) => {
  const get = () => {
    const { scenario, results } = runs('brownout', set);
    return {
      s: scenario,
      naive: results.naive,
      engine: results.engine,
      fault: phase(scenario),
      end: runSeconds(scenario),
    };
  };

  it('the brownout is the errors phase plus 3× latency over the same middle third', () => {
    const { s, fault, end } = get();
    expect(s.upstream.faults[0].kind).toBe('errors');
    expect(s.upstream.faults[1]).toMatchObject({
      kind: 'latency',
      factor: 3,
      fromMs: s.upstream.faults[0].fromMs,
      toMs: s.upstream.faults[0].toMs,
    });
    expect([fault.from, fault.to]).toEqual([end / 3, (2 * end) / 3]);
  });

  it('the engine has more goodput than naive and a far lower amplification', () => {
    const { naive, engine } = get();
    expect(engine.goodput).toBeGreaterThan(naive.goodput * 1.05);
    // ~1.3×: the shipped budget (0.5) retries a brownout's failures about once.
    expect(engine.amplification).toBeLessThanOrEqual(1.4);
    expect(naive.amplification).toBeGreaterThan(5 * engine.amplification);
  });

  it("the engine's goodput returns to its pre-fault level within seconds of the fault's end", () => {
    const { engine, fault, end } = get();
    const before = goodputOver(engine, WARM_UP, fault.from);
    expect(engine.recoveryMs).not.toBeNull();
    expect(engine.recoveryMs!).toBeLessThanOrEqual(15_000);
    expect(goodputOver(engine, fault.to + 10, end)).toBeGreaterThanOrEqual(0.9 * before);
  });

  it("naive's retry storm outlives the brownout: goodput stays well below its pre-fault level", () => {
    const { naive, engine, fault, end } = get();
    const before = goodputOver(naive, WARM_UP, fault.from);
    expect(goodputOver(naive, fault.to, end)).toBeLessThan(0.5 * before);
    // Never within the run for this seed; other seeds come back after 20-30 s.
    if (naive.recoveryMs !== null) expect(naive.recoveryMs).toBeGreaterThan(engine.recoveryMs! + 10_000);
  });
});

describe('brownout under the core profile (breakers at 0.5, K = 2, budget 0.1)', () => {
  it("the upper layers' breakers trip as the brownout ends: recovery takes far longer and goodput ends below naive's", () => {
    const shipped = runs('brownout').results.engine;
    const { scenario, results } = runs('brownout', ['engine.profile=core']);
    const { naive, engine } = results;
    const fault = phase(scenario);
    const agent = engine.series.engine.find((e) => e.layer === 'agent')!;
    expect(agent.breakerOpen.slice(fault.to, fault.to + 5).some((open) => open > 0)).toBe(true);
    expect(shipped.series.engine.every((e) => e.breakerOpen.every((open) => open === 0))).toBe(true);
    expect(engine.recoveryMs!).toBeGreaterThan(shipped.recoveryMs! + 10_000);
    expect(engine.goodput).toBeLessThan(naive.goodput);
  });
});

describe('tpm-burst: requests/s limits cannot see tokens', () => {
  const get = () => {
    const { scenario, results } = runs('tpm-burst');
    return { s: scenario, rps: results['rps-only'], tpm: results['rps+tpm'] };
  };

  it('the quota is hit: with requests/s limits only, the upstream answers many tokens-limit 429s', () => {
    const { rps } = get();
    expect(rps.upstream.rateLimited.tokens).toBeGreaterThanOrEqual(50);
    expect(rps.upstream.rateLimited.requests).toBe(0);
  });

  it('with a tokens/min limit the upstream sees far fewer 429s, the limit sheds locally instead', () => {
    const { rps, tpm } = get();
    expect(tpm.upstream.rateLimited.tokens).toBeLessThanOrEqual(0.1 * rps.upstream.rateLimited.tokens);
    expect(layer(tpm, 'llm').shed.limit ?? 0).toBeGreaterThan(0);
    // A 429 costs the provider no tokens: neither variant wastes more than a trace.
    for (const r of [rps, tpm]) expect(r.upstream.wastedTokens).toBeLessThan(0.01 * r.upstream.tokensServed);
  });

  it('goodput is better with the tokens/min limit, and it has no gap', () => {
    const { s, rps, tpm } = get();
    expect(tpm.goodput).toBeGreaterThan(1.2 * rps.goodput);
    const end = runSeconds(s);
    // rps-only: the breakers open on the 429 storm and goodput stops for a while.
    expect(worstWindow(rps, WARM_UP, end, 10)).toBeLessThan(1);
    expect(worstWindow(tpm, WARM_UP, end, 10)).toBeGreaterThan(0.5 * tpm.goodput);
  });

  it("without a burst the tokens/min bucket never binds before the provider's window, so the variants are identical", () => {
    const text = bundledText('tpm-burst');
    const noBurst = text.replace(/(name: model_tpm[^}\n]*?),\s*burst:\s*[\d_]+/, '$1');
    expect(noBurst).not.toBe(text);
    const { results } = runAll(noBurst);
    const [a, b] = [results['rps-only'], results['rps+tpm']];
    expect(b.upstream).toEqual(a.upstream);
    expect(b.goodput).toBe(a.goodput);
    expect(layer(b, 'llm').shed.limit ?? 0).toBe(layer(a, 'llm').shed.limit ?? 0);
  });
});

describe('replicas: per-replica limits are N times too generous', () => {
  const get = (set: string[] = []) => {
    const { scenario, results } = runs('replicas', set);
    // What the provider's requests/min quota admits over the run's arrivals.
    const quota = (scenario.upstream.models[0].rpm! * scenario.durationMs) / 60_000;
    return { s: scenario, local: results.local, shared: results.shared, quota };
  };

  it('4 replicas, each limiting to the quota, in front of one provider', () => {
    const { s } = get();
    expect(s.traffic.layers[0].replicas).toBe(4);
    expect(s.traffic.engine.limits.find((l) => l.unit === 'requests')).toMatchObject({
      rate: s.upstream.models[0].rpm,
      per: 'minute',
    });
    expect(s.traffic.engine.limits.find((l) => l.unit === 'tokens')).toMatchObject({
      rate: s.upstream.models[0].tpm,
      per: 'minute',
    });
  });

  it('local: the upstream sees ~4× the quota and answers most of it with 429s', () => {
    const { local, quota } = get();
    expect(local.upstream.attempts).toBeGreaterThanOrEqual(3.5 * quota);
    expect(local.upstream.attempts).toBeLessThanOrEqual(4.2 * quota);
    expect(local.upstream.share['429']).toBeGreaterThan(0.65);
    expect(local.upstream.rateLimited.requests).toBeGreaterThan(2 * quota);
  });

  it('shared: the upstream sees ~1× the quota, nearly no 429s, and the limit sheds the rest locally', () => {
    const { local, shared, quota } = get();
    expect(shared.upstream.attempts).toBeGreaterThanOrEqual(0.95 * quota);
    expect(shared.upstream.attempts).toBeLessThanOrEqual(1.05 * quota);
    expect(shared.upstream.share['429']).toBeLessThan(0.02);
    expect(layer(shared, 'gateway').shed.limit ?? 0).toBeGreaterThan(2 * quota);
    // The quota bounds goodput either way; shared refuses at once instead of after 429s.
    expect(shared.goodput).toBeGreaterThanOrEqual(0.95 * local.goodput);
    expect(shared.roots.latencyMs.p95).toBeLessThan(local.roots.latencyMs.p95 / 3);
  });

  it('one replica gives the figures of shared; so does local', () => {
    const { shared } = get();
    const one = get(['layers[0].replicas=1']);
    for (const r of [one.local, one.shared]) {
      expect(r.upstream.attempts).toBe(shared.upstream.attempts);
      expect(r.goodput).toBe(shared.goodput);
    }
  });

  it('with the throttle and breaker on, local still sends over twice the quota; shared is unchanged', () => {
    const { shared } = get();
    const on = get(['engine.throttle=true', 'engine.breaker=true']);
    expect(on.local.upstream.attempts).toBeGreaterThanOrEqual(2.2 * on.quota);
    expect(on.local.upstream.attempts).toBeLessThanOrEqual(3 * on.quota);
    expect(layer(on.local, 'gateway').shed.breaker ?? 0).toBeGreaterThan(on.quota);
    expect(on.shared.upstream.attempts).toBe(shared.upstream.attempts);
  });
});

describe('metastable: a short trigger, a collapse that outlives it', () => {
  const get = (set: string[] = []) => {
    const { scenario, results } = runs('metastable', set);
    return { naive: results.naive, engine: results.engine, trigger: phase(scenario), end: runSeconds(scenario) };
  };

  it('naive stays collapsed long after the trigger ends (recovery: never)', () => {
    const { naive, trigger, end } = get();
    const before = goodputOver(naive, WARM_UP, trigger.from);
    expect(before).toBeGreaterThan(10);
    expect(naive.recoveryMs).toBeNull();
    expect(goodputOver(naive, trigger.to + 30, end)).toBeLessThan(0.2 * before);
  });

  it('the engine recovers within ~30 s and stays recovered; breakers at 0.5 bring it back sooner', () => {
    const { engine, trigger, end } = get();
    const before = goodputOver(engine, WARM_UP, trigger.from);
    expect(engine.recoveryMs).not.toBeNull();
    expect(engine.recoveryMs!).toBeLessThanOrEqual(40_000);
    const half = get(['engine.breaker.failureRatio=0.5']).engine;
    expect(half.recoveryMs!).toBeLessThan(engine.recoveryMs!);
    expect(goodputOver(engine, trigger.to + 30, end)).toBeGreaterThanOrEqual(0.9 * before);
    expect(worstWindow(engine, trigger.to + 30, end, 10)).toBeGreaterThan(0.7 * before);
  });

  it("naive sends several times the engine's load", () => {
    const { naive, engine } = get();
    expect(naive.amplification).toBeGreaterThan(3 * engine.amplification);
  });

  it('with cancel-on-disconnect the engine is back at once; naive retries alone keep the queue full', () => {
    const { naive, engine, trigger, end } = get(['upstream.cancelOnDisconnect=true']);
    expect(engine.recoveryMs).not.toBeNull();
    expect(engine.recoveryMs!).toBeLessThanOrEqual(10_000);
    expect(naive.recoveryMs).toBeNull();
    expect(goodputOver(naive, trigger.to + 30, end)).toBeLessThan(0.5 * goodputOver(naive, WARM_UP, trigger.from));
  });
});

describe('fallback: the primary goes down, the secondary takes the calls', () => {
  const get = () => {
    const { scenario, results } = runs('fallback');
    return {
      s: scenario,
      naive: results.naive,
      engine: results.engine,
      outage: phase(scenario),
      end: runSeconds(scenario),
    };
  };

  it('the outage hits the primary only, and the llm layer can fall back', () => {
    const { s } = get();
    expect(s.upstream.faults[0]).toMatchObject({ kind: 'outage', model: 'primary' });
    expect(s.traffic.layers.at(-1)?.models).toEqual(['primary', 'secondary']);
  });

  it('naive collapses during the outage: it never tries the secondary', () => {
    const { naive, outage } = get();
    const before = goodputOver(naive, WARM_UP, outage.from);
    expect(goodputOver(naive, outage.from + 5, outage.to)).toBeLessThan(0.2 * before);
    expect(model(naive, 'secondary').attempts).toBe(0);
    expect(naive.amplification).toBeGreaterThan(5);
  });

  it('the engine keeps goodput through the outage on the secondary (degraded results)', () => {
    const { engine, outage } = get();
    const before = goodputOver(engine, WARM_UP, outage.from);
    expect(goodputOver(engine, outage.from + 5, outage.to)).toBeGreaterThanOrEqual(0.8 * before);
    expect(engine.successRate).toBeGreaterThanOrEqual(0.95);
    // Most leaf calls made during the outage were answered by the secondary.
    const leafCallsInOutage = engine.series.leafCalls.slice(outage.from, outage.to).reduce((a, b) => a + b, 0);
    expect(model(engine, 'secondary').status['200'] ?? 0).toBeGreaterThanOrEqual(0.5 * leafCallsInOutage);
    expect(engine.amplification).toBeLessThanOrEqual(1.2);
  });

  it("the primary's breaker opens during the outage and is closed again by the end", () => {
    const { s, engine, outage, end } = get();
    const llm = engine.series.engine.find((e) => e.layer === s.traffic.layers.at(-1)?.name);
    expect(llm).toBeDefined();
    expect(llm!.breakerOpen.slice(outage.from, outage.to).some((open) => open > 0)).toBe(true);
    expect(llm!.breakerOpen.slice(outage.to + 10, end).every((open) => open === 0)).toBe(true);
  });

  it('overall, the engine has more goodput than naive', () => {
    const { naive, engine } = get();
    expect(engine.goodput).toBeGreaterThan(1.2 * naive.goodput);
  });
});

describe('sdk-stack: the SDK retries under the agent retries', () => {
  const get = (set: string[] = []) => {
    const { scenario, results } = runs('sdk-stack', set);
    const p = phase(scenario);
    // The first 2 s of the phase still carry calls started before it.
    return { naive: results.naive, engine: results.engine, from: p.from + 2, to: p.to };
  };

  it('naive: the leaf sees ~8× during the heavy failure, far above what the agent layer shows', () => {
    const { naive, from, to } = get();
    const inPhase = amplificationOver(naive.series, from, to);
    expect(inPhase).toBeGreaterThanOrEqual(6.5);
    expect(inPhase).toBeLessThanOrEqual(9.5);
    const agent = layer(naive, 'agent').amplification;
    expect(agent).toBeLessThanOrEqual(3);
    // The SDK's hidden retries: the llm row is well above the agent's own.
    expect(layer(naive, 'llm').amplification).toBeGreaterThan(1.8 * agent);
  });

  it('when every call fails, naive is 3 × 3 = 9× at the leaf', () => {
    const { naive, from, to } = get(['upstream.faults[0].rate=1']);
    const inPhase = amplificationOver(naive.series, from, to);
    expect(inPhase).toBeGreaterThanOrEqual(8.5);
    expect(inPhase).toBeLessThanOrEqual(9.5);
  });

  it('with the SDK retries off, the leaf shows exactly what the agent shows', () => {
    const { naive } = get(['layers[2].retry.maxRetries=0']);
    expect(layer(naive, 'llm').amplification).toBeCloseTo(layer(naive, 'agent').amplification, 6);
  });

  it('engine: ~1.2× over the run, ~1.5× during the failure, a third of the attempts of naive', () => {
    const { naive, engine, from, to } = get();
    expect(engine.amplification).toBeLessThanOrEqual(1.4);
    expect(amplificationOver(engine.series, from, to)).toBeLessThanOrEqual(1.7);
    expect(engine.upstream.attempts).toBeLessThan(naive.upstream.attempts / 2.5);
  });

  it("engine: 429s and 503s each stay under the shipped breaker's 80 %, so it never opens; the core's 50 % opens it", () => {
    const { engine } = get();
    const open = (r: RunResult) => r.series.engine.some((e) => e.breakerOpen.some((x) => x > 0));
    expect(open(engine)).toBe(false);
    expect(layer(engine, 'llm').shed.breaker ?? 0).toBe(0);
    expect(open(get(['engine.profile=core']).engine)).toBe(true);
  });
});

describe('stream-faults: cut, stalled and slow streams', () => {
  const get = () => runs('stream-faults').results;

  it('the llm layer streams; the faults are a cut, a forever stall and a slow first token on the primary', () => {
    const { scenario } = runs('stream-faults');
    expect(scenario.traffic.layers.at(-1)).toMatchObject({
      name: 'llm',
      stream: true,
      models: ['primary', 'fallback'],
    });
    expect(scenario.upstream.faults.map((f) => [f.kind, f.model])).toEqual([
      ['cut', 'primary'],
      ['stall', 'primary'],
      ['slow-first-token', 'primary'],
    ]);
    expect(scenario.upstream.faults[1].stallMs).toBeUndefined(); // forever
  });

  it('naive and sdk take cut streams as answers: truncated successes, counted per layer and in all', () => {
    for (const r of [get().naive, get().sdk]) {
      const llm = layer(r, 'llm');
      // ~190 of ~2,550 answers (the header's figure); their success rate cannot see them.
      expect(llm.truncatedSuccesses).toBeGreaterThan(120);
      expect(llm.truncatedSuccesses).toBeLessThan(260);
      expect(llm.successRate).toBe(1);
      expect(r.truncatedSuccesses).toBe(llm.truncatedSuccesses);
      // Every agent call that got one holds a truncated answer too (3 llm calls each, some with more than one).
      const agent = layer(r, 'agent').truncatedSuccesses!;
      expect(agent).toBeGreaterThan(0);
      expect(agent).toBeLessThanOrEqual(llm.truncatedSuccesses!);
    }
  });

  it('the engine takes none: as shipped (first-token) a cut after the first token ends the answer with an error; held whole, every cut is retried or failed over', () => {
    const { engine, 'engine-complete': whole } = get();
    for (const r of [engine, whole]) {
      expect(r.truncatedSuccesses).toBe(0);
      expect(r.layers.map((l) => l.truncatedSuccesses)).toEqual([0, 0]);
      // The stalls cost the engine 2 s where naive waits out its 30 s timeout: the agents' tail halves.
      expect(layer(r, 'agent').latencyMs.p99).toBeLessThan(0.7 * layer(get().naive, 'agent').latencyMs.p99);
    }
    // first-token: the caller had the stream, so a cut or stall after it is an honest failure, not a retry.
    expect(layer(engine, 'llm').successRate).toBeGreaterThan(0.85);
    expect(layer(engine, 'llm').successRate).toBeLessThan(0.95);
    // complete: nothing reached the caller, so every break is retried or failed over.
    expect(model(whole, 'fallback').status['200']).toBeGreaterThan(100);
    expect(layer(whole, 'llm').successRate).toBeGreaterThan(0.99);
    expect(model(whole, 'fallback').status['200']).toBeGreaterThan(model(engine, 'fallback').status['200']);
  });

  it('TTFT tail: naive and sdk wait out 12 s first tokens; the engine guard keeps p99 within a few seconds', () => {
    const { naive, sdk, engine } = get();
    // Their p99 is a stalled stream's retry after the 30 s timeout; the 12 s first tokens sit below it.
    for (const r of [naive, sdk]) expect(layer(r, 'llm').ttftMs!.p99).toBeGreaterThanOrEqual(25_000);
    expect(layer(sdk, 'llm').ttftMs!.p95).toBeGreaterThanOrEqual(12_000);
    const e = layer(engine, 'llm').ttftMs!;
    expect(e.p99).toBeLessThan(5_000);
    expect(e.p50).toBeLessThan(1_000);
    expect(e.p50).toBeLessThanOrEqual(e.p95);
    expect(e.p95).toBeLessThanOrEqual(e.p99);
  });

  it('TTFT and truncated successes only for runs with a streamed layer', () => {
    const { naive } = runs('stream-faults', ['layers[1].stream=false']).results;
    expect(naive.truncatedSuccesses).toBeUndefined();
    expect(naive.layers.every((l) => l.ttftMs === undefined && l.truncatedSuccesses === undefined)).toBe(true);
    // Not streamed, a cut body is an error to every caller: retried, never an answer.
    expect(layer(naive, 'llm').retries).toBeGreaterThan(0);
  });

  it('the header says so', () => {
    const text = bundledText('stream-faults');
    expect(text).toMatch(/truncated successes/);
    expect(text).toMatch(/0 truncated successes/);
    expect(text).toMatch(/TTFT p99/);
  });
});

describe('framework-stack: an agent framework over an SDK over a gateway', () => {
  const get = (set: string[] = []) => {
    const { scenario, results } = runs('framework-stack', set);
    const p = phase(scenario);
    return { ...results, from: p.from + 2, to: p.to } as Record<string, RunResult> & { from: number; to: number };
  };
  const everythingFails = ['upstream.faults[0].from=0s', 'upstream.faults[0].to=10m'];

  it('when every call fails: (3 + 2) × 3 = exactly 15× for the Agents SDK stack, 9× without runner retries', () => {
    expect(get(everythingFails).agents.amplification).toBe(15);
    expect(get([...everythingFails, 'layers[1].retry.runnerRetries=0']).agents.amplification).toBe(9);
    // LangChain: 7 × 3 = 21 at most; its 60 s call timeout cuts a few of the 7 attempts short.
    const lc = get(everythingFails).langchain.amplification;
    expect(lc).toBeGreaterThan(19);
    expect(lc).toBeLessThanOrEqual(21);
  });

  it('during the outage the Agents SDK stack sends ~15×; over the run ~5.5×, LangChain more', () => {
    const { agents, langchain, from, to } = get();
    const inPhase = amplificationOver(agents.series, from, to);
    expect(inPhase).toBeGreaterThanOrEqual(13);
    expect(inPhase).toBeLessThanOrEqual(15.5);
    expect(agents.amplification).toBeGreaterThan(5);
    expect(langchain.amplification).toBeGreaterThan(agents.amplification);
    // LangChain's long backoff rides out the outage: more tasks succeed, much later.
    expect(langchain.successRate).toBeGreaterThan(0.95);
    expect(langchain.successRate).toBeGreaterThan(agents.successRate);
  });

  it('the engine in the gateway: under 1× over the run; the Agents SDK obeys its refusals and fails fast', () => {
    const { agents, engine, from, to } = get();
    expect(engine.amplification).toBeLessThan(1);
    expect(amplificationOver(engine.series, from, to)).toBeLessThan(1.5);
    expect(layer(engine, 'runner').amplification).toBeLessThan(1.1);
    expect(engine.roots.latencyMs.p50).toBeLessThan(agents.roots.latencyMs.p50);
  });

  it('LangChain ignores x-should-retry and retries the refusals, yet the breaker holds the upstream near 2×', () => {
    const { langchain, 'langchain-engine': lce } = get();
    expect(layer(lce, 'runner').amplification).toBeGreaterThan(3.5);
    expect(lce.amplification).toBeLessThan(2.5);
    expect(lce.amplification).toBeLessThan(langchain.amplification / 3);
    expect(layer(lce, 'gateway').shed.breaker ?? 0).toBeGreaterThan(1000);
    expect(lce.successRate).toBeGreaterThan(0.9);
  });
});
