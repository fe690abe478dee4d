import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { calibrate } from '../../src/calibrate/calibrate.js';
import type { FitReport } from '../../src/calibrate/fit-report.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { yaml } from '../../src/scenario/yaml-module.js';
import { cli, tempDir } from '../cli/capture-io.js';
import { fixtureTraces, type FixtureOptions } from './otlp-fixture.js';

/** The traces of `o` as a JSON Lines file in a fresh directory; returns the directory. */
function traces(
  o: FixtureOptions,
  name = 'traces.jsonl',
): { dir: string; truth: ReturnType<typeof fixtureTraces>['truth'] } {
  const { lines, truth } = fixtureTraces(o);
  return { dir: tempDir({ [name]: `${lines.join('\n')}\n` }), truth };
}

function row(r: FitReport, layer: string, metric: string) {
  const x = r.rows.find((x) => x.layer === layer && x.metric === metric);
  if (x === undefined) throw new Error(`no row ${layer} ${metric}`);
  return x;
}

const doc = (text: string): any => yaml().parse(text);

/** 30 % of attempts answered 429 from 10 s to 25 s of a 40 s run of 200 root tasks. */
const STORM = { failRate: 0.3, failFrom: 10_000, failTo: 25_000, roots: 200, rate: 5 } as const;

describe('calibrate: HTTP attempts under one chat span (instrumentation-openai + undici)', () => {
  let dir: string;
  let c: ReturnType<typeof calibrate>;
  let truth: ReturnType<typeof fixtureTraces>['truth'];
  beforeAll(() => {
    ({ dir, truth } = traces({ ...STORM, shape: 'http', retryHeader: true }));
    c = calibrate([{ path: join(dir, 'traces.jsonl'), label: 'traces.jsonl' }]);
  });

  it('writes a scenario that loads, with the tree, the retries, the arrivals and the fault the traces show', () => {
    const s = loadScenario(c.text, { source: 'calibrated' });
    expect(s.traffic.layers.map((l) => l.name)).toEqual(['orchestrator', 'researcher', 'llm']);
    expect(s.traffic.layers[0].fanout).toBe(3);
    // The OpenAI SDK's waits (0.44 s, 0.88 s at the middle of its jitter): its preset.
    expect(s.traffic.layers[2].retry).toEqual({ policy: 'sdk', sdk: 'openai', maxRetries: 2, runnerRetries: 0 });
    expect(s.traffic.arrival.type).toBe('poisson');
    const d = doc(c.text);
    expect(d.layers[1].tools).toEqual([{ tool: 'search', sideEffect: false, calls: 1 }]);
    const phase = d.upstream.faults.find((f: { from?: string }) => f.from !== undefined);
    expect(phase).toMatchObject({ kind: 'errors', from: '10s', to: '25s', status: { 429: 1 } });
    expect(phase.rate).toBeGreaterThan(0.25);
    expect(phase.rate).toBeLessThan(0.35);
    expect(c.obs.roots).toBe(truth.roots);
    expect(c.obs.leaf.logical).toBe(truth.modelCalls);
    expect(c.obs.leaf.attempts).toBe(truth.attempts);
    expect(c.obs.leaf.retry.stainlessCounted).toBe(truth.attempts);
  });

  it('names the traces, span counts and time range in its header, and each fit', () => {
    expect(c.text).toMatch(
      /^# calibrated by stormlab calibrate from traces\.jsonl\n# \d+ spans \(\d+ GenAI\) in 200 traces, 200 root tasks, from 2025-10-09T08:53:20\.000Z to /,
    );
    expect(c.text).toMatch(
      /# {3}- layers\[2\] llm: \d+ retries \(\d+ as HTTP attempts under the call's span\), at most 3 attempts.*→ sdk openai/,
    );
  });

  it('simulates what it wrote within 5 % on calls and attempts and 10 % on latency p50/p95, layer by layer', () => {
    for (const layer of ['orchestrator', 'researcher', 'llm']) {
      for (const metric of ['calls per root', 'attempts per call'])
        expect(Math.abs(row(c.report, layer, metric).relativeError!), `${layer} ${metric}`).toBeLessThan(0.05);
      for (const metric of ['latency p50 ms', 'latency p95 ms'])
        expect(Math.abs(row(c.report, layer, metric).relativeError!), `${layer} ${metric}`).toBeLessThan(0.1);
    }
    expect(Math.abs(row(c.report, 'upstream', 'tokens per root').relativeError!)).toBeLessThan(0.1);
    expect(Math.abs(row(c.report, 'upstream', 'share failed').relativeError!)).toBeLessThan(0.1);
  });

  it("writes the agents' model calls one after another (they never overlapped), the orchestrator's agents together", () => {
    const d = doc(c.text);
    expect(d.layers[0].sequential).toBeUndefined();
    expect(d.layers[1].sequential).toBe(true);
  });
});

describe('calibrate: sibling retries (the Vercel AI SDK)', () => {
  let c: ReturnType<typeof calibrate>;
  beforeAll(() => {
    const { dir } = traces({ ...STORM, shape: 'sibling' });
    c = calibrate([{ path: join(dir, 'traces.jsonl'), label: 'traces.jsonl' }]);
  });

  it('groups sibling doGenerate spans into logical calls and finds the vercel-ai preset (2 s, then 4 s)', () => {
    const d = doc(c.text);
    expect(d.layers.map((l: { name: string }) => l.name)).toEqual(['orchestrator', 'researcher', 'llm']);
    expect(d.layers[2].retry).toEqual({ policy: 'sdk', sdk: 'vercel-ai' });
    expect(d.layers[1].tools[0].tool).toBe('search');
    expect(c.text).toMatch(
      /as sibling spans \(confidence medium: 0 of \d+ followed a failure with a retryable status, \d+ a failure with no status recorded/,
    );
    // Failures with no status are said, and simulated as 503.
    expect(c.draft.notes.some((n) => /failed attempts had no HTTP status/.test(n))).toBe(true);
    expect(Math.abs(row(c.report, 'llm', 'attempts per call').relativeError!)).toBeLessThan(0.05);
  });
});

describe('calibrate: fan-out', () => {
  it('an orchestrator starting a Poisson number of agents is fitted as a Poisson (χ² test), and simulates like it', () => {
    const { dir, truth } = traces({ roots: 400, rate: 10, agents: { poisson: 2.5 } });
    const c = calibrate([{ path: join(dir, 'traces.jsonl'), label: 't' }]);
    const fan = doc(c.text).layers[0].fanout;
    expect(fan.dist).toBe('poisson');
    expect(fan.mean).toBeGreaterThan(2.2);
    expect(fan.mean).toBeLessThan(2.8);
    expect(c.text).toMatch(
      /# {3}- layers\[0\] orchestrator: fan-out Poisson \(mean [\d.]+, a draw of 0 is 1: [\d.]+ per call; χ² p = /,
    );
    expect(c.obs.level(2).logical).toBe(truth.agentCalls);
    expect(Math.abs(row(c.report, 'researcher', 'calls per root').relativeError!)).toBeLessThan(0.05);
  });

  it('a fixed number of agents stays fixed; a shape no Poisson makes is empirical, and says why', () => {
    const fixed = calibrate([{ path: join(traces({ roots: 60 }).dir, 'traces.jsonl'), label: 't' }]);
    expect(doc(fixed.text).layers[0].fanout).toBe(3);
    // Researchers make 2 model calls, 1 when the first failed for good: no Poisson.
    expect(fixed.text).toMatch(/layers\[1\] researcher: fan-out (fixed|empirical over 2 values \(not Poisson)/);
  });
});

describe('calibrate: arrivals', () => {
  it('roots that start as others end are closed-loop users', () => {
    const { dir } = traces({ users: 8, roots: 160 });
    const c = calibrate([{ path: join(dir, 'traces.jsonl'), label: 't' }]);
    expect(doc(c.text).arrival).toMatchObject({ type: 'closed', users: 8 });
    // Users start tasks as theirs end: the fit cannot replay the starts, it runs the users.
    expect(c.report.roots).toMatchObject({ runs: 8, arrivals: 'as fitted' });
  });

  it('roots that arrive on their own are a rate', () => {
    const { dir } = traces({ rate: 10, roots: 300 });
    const d = doc(calibrate([{ path: join(dir, 'traces.jsonl'), label: 't' }]).text);
    expect(d.arrival.type).toBe('poisson');
    expect(d.arrival.rate).toBeGreaterThan(8.5);
    expect(d.arrival.rate).toBeLessThan(11.5);
  });
});

describe('calibrate: privacy', () => {
  it('never copies prompt text (an attribute or an event) into the scenario or the report', async () => {
    const secret = 'TOP-SECRET-PROMPT-42';
    const { dir } = traces({ roots: 30, secret });
    expect(readFileSync(join(dir, 'traces.jsonl'), 'utf8')).toContain(secret);
    const r = await cli(['calibrate', 'traces.jsonl', '-o', 'out.yaml', '--report', 'r.json'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    expect(r.files.get('out.yaml')).toBeDefined();
    for (const text of [r.files.get('out.yaml')!, r.files.get('r.json')!, r.out, r.err])
      expect(text).not.toContain(secret);
  });

  it('says so in --help', async () => {
    const r = await cli(['calibrate', '--help']);
    expect(r.out).toMatch(/never copies prompt, completion or tool argument text/);
    expect(r.out).toMatch(/Memory: the traces are streamed/);
  });
});

describe('calibrate on the command line', () => {
  it('prints the fit table, writes --report as stormlab.calibrate/v1, notes on stderr', async () => {
    const { dir } = traces({ ...STORM, roots: 60 });
    const r = await cli(['calibrate', 'traces.jsonl', '-o', 'mine.yaml', '--report', 'r.json'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^\d+ spans .* in 60 traces/);
    expect(r.out).toMatch(/\nlayer +figure +observed +simulated +rel\. error\n/);
    expect(r.out).toMatch(/\nllm +attempts per call +[\d.]+ +[\d.]+ +[+-][\d.]+ %\n/);
    const report = JSON.parse(r.files.get('r.json')!) as FitReport;
    expect(report.schema).toBe('stormlab.calibrate/v1');
    // Simulated on the traced arrivals, over 8 seeds (60 roots are fewer than 2,000 pooled).
    expect(report.roots).toEqual({ observed: 60, simulated: 480, runs: 8, arrivals: 'replayed' });
    expect(r.out).toMatch(
      /\nfit: observed 60 root tasks; simulated 480 in 8 runs \(seeds 1–8\), each replaying the traced arrivals\n/,
    );
    expect(r.err).toMatch(/^calibrate: tool search: whether it has side effects cannot be seen in traces/m);
    // Each note on stderr is a comment in the scenario too.
    for (const line of r.err.trim().split('\n'))
      expect(r.files.get('mine.yaml')).toContain(line.replace(/^calibrate: /, ''));
  });

  it('-o - writes the scenario to stdout and the summary to stderr', async () => {
    const { dir } = traces({ roots: 20 });
    const r = await cli(['calibrate', 'traces.jsonl', '-o', '-'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    expect(() => loadScenario(r.out)).not.toThrow();
    expect(r.err).toMatch(/wrote the scenario to stdout/);
  });

  it('--faults adds a named phase over the middle third, after the fit', async () => {
    const { dir } = traces({ roots: 100, rate: 5 });
    const r = await cli(['calibrate', 'traces.jsonl', '-o', 'b.yaml', '--faults', 'brownout'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    const d = doc(r.files.get('b.yaml')!);
    const duration = loadScenario(r.files.get('b.yaml')!).durationMs;
    const third = `${Math.round(duration / 3000)}s`;
    expect(d.upstream.faults).toEqual([
      {
        kind: 'errors',
        from: third,
        to: `${Math.round((2 * duration) / 3000)}s`,
        rate: 0.3,
        status: { 429: 0.5, 503: 0.5 },
      },
      { kind: 'latency', from: third, to: `${Math.round((2 * duration) / 3000)}s`, factor: 3 },
    ]);
    expect(r.files.get('b.yaml')).toMatch(/# --faults brownout: from /);
    const o = await cli(['calibrate', 'traces.jsonl', '-o', 'o.yaml', '--faults', 'outage'], { cwd: dir });
    expect(doc(o.files.get('o.yaml')!).upstream.faults[0]).toMatchObject({ kind: 'outage', status: 503 });
    const bad = await cli(['calibrate', 'traces.jsonl', '-o', 'x.yaml', '--faults', 'meteor'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('stormlab: --faults: expected one of brownout, outage, rate-limit, got "meteor"\n');
  });

  it('compare runs the calibrated scenario (naive as observed, vs the engine); tune tunes its engine', async () => {
    const { dir } = traces({ roots: 60, rate: 5 });
    const w = await cli(['calibrate', 'traces.jsonl', '-o', 'mine.yaml', '--faults', 'outage', '-q'], { cwd: dir });
    expect(w.code, w.err).toBe(0);
    const files = new Map(w.files);
    const cwd = tempDir(Object.fromEntries(files));
    const cmp = await cli(['compare', 'mine.yaml', '--no-ui', '--json', 'c.json'], { cwd });
    expect(cmp.code, cmp.err).toBe(0);
    const result = JSON.parse(cmp.files.get('c.json')!);
    expect(result.variants.map((v: { name: string }) => v.name)).toEqual(['naive', 'engine']);
    const t = await cli(
      [
        'tune',
        'mine.yaml',
        '--maximize',
        'goodput',
        '--params',
        'engine.throttle.k,engine.retryBudget.ratio',
        '--budget',
        '4',
        '--seeds',
        '1',
        '--workers',
        '1',
        '-q',
      ],
      { cwd },
    );
    expect(t.code, t.err).toBe(0);
    expect(t.out).toMatch(/engine\.throttle\.k/);
  });
});
