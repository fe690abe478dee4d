import { beforeAll, describe, expect, it } from 'vitest';
import { type Calibration, calibrate } from '../../src/calibrate/calibrate.js';
import type { RequestLogEntry } from '../../src/fake-upstream/request-log.js';
import { type ProgramRun, quantile, runProgram, type Truth } from './otel-run.js';

/**
 * THE PROOF of `calibrate`: a real multi-agent program (test/calibrate/otel-app/agents.mjs: an
 * orchestrator fanning out to 3 researchers, each a model call, a tool call and a model call
 * through the official openai SDK with its own retries) instrumented with the real
 * OpenTelemetry Node SDK, @opentelemetry/instrumentation-openai and the undici
 * instrumentation, exporting OTLP JSON to disk, runs against the server `stormlab serve` runs
 * (seeded: its fault draws are the same for the same order of requests) with a fault phase.
 * `calibrate` reads its traces; the scenario it writes, simulated, must match what the program
 * did — counted at the server (model calls: requests with x-stainless-retry-count 0;
 * attempts: every request) and by the program's own clock (latency per layer) — not what
 * calibrate itself read from the traces.
 */

const ROOTS = 320;
const RATE = 10;
const FANOUT = 3;

interface AgentsTruth extends Truth {
  modelFailures: number;
  agentFailures: number;
}

describe('calibrate: a real OpenTelemetry-instrumented multi-agent program against stormlab serve', () => {
  let run: ProgramRun<AgentsTruth>;
  let truth: AgentsTruth;
  let served: RequestLogEntry[];
  let c: Calibration;

  beforeAll(async () => {
    // The program's retries meet a storm: 30 % of attempts fail (429 or 500) from 5 s to 25 s.
    run = await runProgram<AgentsTruth>(
      'agents.mjs',
      [{ kind: 'errors', fromMs: 5000, toMs: 25_000, rate: 0.3, status: { 429: 0.5, 500: 0.5 } }],
      { ROOTS: String(ROOTS), RATE: String(RATE), FANOUT: String(FANOUT), SEED: '28' },
    );
    ({ truth, served } = run);
    c = calibrate([{ path: run.traces, label: 'traces.jsonl' }]);
  }, 120_000);

  it('the run met the fault and retried through the SDK (or the proof proves nothing)', () => {
    const failed = served.filter((e) => e.status >= 400).length;
    expect(failed).toBeGreaterThan(50);
    expect(served.filter((e) => (e.retryCount ?? 0) > 0).length).toBeGreaterThan(40);
    expect(truth.roots).toHaveLength(ROOTS);
  });

  it('reads the tree the program has: orchestrator → researchers (sequential, a search tool) → the openai SDK', () => {
    const d = c.draft.doc as { layers: Array<Record<string, unknown>> };
    expect(d.layers.map((l) => l.name)).toEqual(['orchestrator', 'researcher', 'llm']);
    expect(d.layers[0].fanout).toBe(FANOUT);
    expect(d.layers[1].sequential).toBe(true);
    expect(d.layers[1].tools).toEqual([{ tool: 'search', sideEffect: false, calls: 1 }]);
    expect(d.layers[2].retry).toEqual({ policy: 'sdk', sdk: 'openai' });
    // What it read of the upstream is the server's own count.
    expect(c.obs.leaf.attempts).toBe(served.length);
    expect(c.obs.leaf.logical).toBe(truth.modelCalls.length);
    expect(c.obs.roots).toBe(ROOTS);
  });

  it('its simulation matches the program counted at the server: calls per root per layer and attempts per call within 5 %', () => {
    const sim = c.simulated;
    const roots = sim.roots.offered;
    const logicalAtServer = served.filter((e) => e.retryCount === 0).length;
    expect(logicalAtServer).toBe(truth.modelCalls.length);
    const expected = [
      ['orchestrator', truth.roots.length / ROOTS],
      ['researcher', truth.agents.length / ROOTS],
      ['llm', logicalAtServer / ROOTS],
    ] as const;
    for (let i = 0; i < expected.length; i++) {
      const [name, perRoot] = expected[i];
      const layer = sim.layers[i];
      expect(layer.name).toBe(name);
      const rel = layer.logicalCalls / roots / perRoot - 1;
      expect(Math.abs(rel), `${name} calls per root: sim ${layer.logicalCalls / roots} vs ${perRoot}`).toBeLessThan(
        0.05,
      );
    }
    const llm = sim.layers[2];
    const attemptsAtServer = served.length / logicalAtServer;
    const rel = llm.attempts / llm.logicalCalls / attemptsAtServer - 1;
    expect(
      Math.abs(rel),
      `attempts per call: sim ${llm.attempts / llm.logicalCalls} vs ${attemptsAtServer} at the server`,
    ).toBeLessThan(0.05);
  });

  it("with the server's --log beside the traces, the upstream's errors are the server's, request for request", () => {
    const withLog = calibrate([{ path: run.traces, label: 'traces.jsonl' }], {
      serveLogs: [{ path: run.serveLog, label: 'serve.jsonl' }],
    });
    const failed = served.filter((e) => e.status === 0 || e.status >= 400).length;
    const row = withLog.report.rows.find((r) => r.layer === 'upstream' && r.metric === 'share failed')!;
    expect(row.observed).toBeCloseTo(failed / served.length, 4);
    expect(withLog.draft.fits.join('\n')).toContain(
      `the server's own statuses of ${served.length} requests (the traces had ${served.length} attempts)`,
    );
  });

  it("its simulation matches the program's own clock: latency p50 and p95 per layer within 10 %", () => {
    const measured = [truth.roots, truth.agents, truth.modelCalls];
    for (let i = 0; i < measured.length; i++) {
      const layer = c.simulated.layers[i];
      for (const [q, key] of [
        [0.5, 'p50'],
        [0.95, 'p95'],
      ] as const) {
        const want = quantile(measured[i], q);
        const got = layer.latencyMs[key];
        expect(Math.abs(got / want - 1), `${layer.name} latency ${key}: sim ${got} ms vs ${want} ms`).toBeLessThan(0.1);
      }
    }
  });
});
