import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { BUNDLED_DIR } from '../../src/scenario/bundled.js';
import { cli } from './capture-io.js';
import { BUNDLED_NAMES } from '../helpers/bundled-names.js';

const HEADLINE_27 = /^amplification 27\.0× · goodput [\d.]+\/s · success [\d.]+ %$/;

/** The result file's text with the `timing` block (the only wall-clock part, always last) cut out. */
function withoutTiming(json: string): string {
  const cut = json.replace(/,\n {2}"timing": \{[\s\S]*?\n {2}\}(?=\n\}\n$)/, '');
  expect(cut, 'a timing block to cut').not.toBe(json);
  return cut;
}

/** Without a terminal, stderr carries only plain progress lines: no escape codes, one per tenth. */
function expectOnlyProgress(err: string): void {
  const lines = err.trimEnd().split('\n').filter(Boolean);
  for (const line of lines) expect(line).toMatch(/^\[ *[\d.]+m?s\/[\d.]+m?s +\d+%\] /);
  expect(err).not.toContain('\x1b');
}

async function resultOf(argv: string[], wallStepMs = 0): Promise<{ text: string; json: any }> {
  const r = await cli([...argv, '--json', 'out.json', '-q'], { wallStepMs });
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const text = r.files.get('out.json');
  expect(text).toBeDefined();
  return { text: text!, json: JSON.parse(text!) };
}

function expectVariantShape(v: any): void {
  expect(v).toMatchObject({
    name: expect.any(String),
    amplification: expect.any(Number),
    goodput: expect.any(Number),
    successRate: expect.any(Number),
    upstream: { attempts: expect.any(Number), status: expect.any(Object), wastedTokens: expect.any(Number) },
  });
  expect(v.layers.length).toBeGreaterThan(0);
  for (const l of v.layers) {
    expect(l).toMatchObject({
      name: expect.any(String),
      logicalCalls: expect.any(Number),
      attempts: expect.any(Number),
      amplification: expect.any(Number),
      latencyMs: { p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number) },
      shed: expect.any(Object),
    });
  }
}

describe('stormlab run', () => {
  it('prints the summary of the bundled retry-storm with amplification 27.0× and exits 0', async () => {
    const r = await cli(['run', 'retry-storm']);
    expectOnlyProgress(r.err);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(HEADLINE_27);
    expect(r.out).toMatch(/^amplification +27\.0×$/m);
    for (const layer of ['orchestrator', 'agent', 'llm']) expect(r.out).toContain(`layer ${layer}\n`);
    // Per layer 3 ×, 9 ×, 27 ×: the retries multiply down the tree.
    expect(r.out.match(/^ {2}amplification +(\S+)$/gm)?.map((l) => l.trim().split(/ +/)[1])).toEqual([
      '3.00×',
      '9.00×',
      '27.0×',
    ]);
    expect(r.out).toMatch(/retry-storm · seed 1 · sim/);
    expect(r.out.endsWith('\n')).toBe(true);
  });

  it('--quiet prints only the headline', async () => {
    const r = await cli(['run', 'retry-storm', '--quiet']);
    expect(r.code).toBe(0);
    expectOnlyProgress(r.err);
    expect(r.out.split('\n')).toHaveLength(2);
    expect(r.out.trimEnd()).toMatch(HEADLINE_27);
    const short = await cli(['run', 'retry-storm', '-q', '--json', 'x.json']);
    expect(short.out).toBe(r.out);
    expect(short.files.has('x.json')).toBe(true);
  });

  it('--json FILE writes a stormlab.result/v1 file with one variant, and says so', async () => {
    const r = await cli(['run', 'retry-storm', '--json', 'result.json']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\nwrote result\.json\n$/);
    expect([...r.files.keys()]).toEqual(['result.json']);
    const json = JSON.parse(r.files.get('result.json')!);
    expect(json).toMatchObject({ schema: 'stormlab.result/v1', scenario: 'retry-storm', seed: 1, mode: 'sim' });
    expect(json.variants).toHaveLength(1);
    expectVariantShape(json.variants[0]);
    expect(json.variants[0].amplification).toBe(27);
    expect(json.variants[0].layers.map((l: any) => l.name)).toEqual(['orchestrator', 'agent', 'llm']);
    expect(json.timing).toMatchObject({ wallMs: expect.any(Number), attemptsPerSec: expect.any(Number) });
  });

  it('--set layers[*].retry.attempts=2 gives 2 × 2 × 2 = 8.0×', async () => {
    const r = await cli(['run', 'retry-storm', '--set', 'layers[*].retry.attempts=2', '-q']);
    expectOnlyProgress(r.err);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^amplification 8\.00× /);
    const { json } = await resultOf(['run', 'retry-storm', '--set', 'layers[*].retry.attempts=2']);
    expect(json.variants[0].amplification).toBe(8);
  });

  it('--set is repeatable and applied in order', async () => {
    const { json } = await resultOf([
      'run',
      'retry-storm',
      '--set',
      'layers[*].retry.attempts=2',
      '--set',
      'layers[0].retry.attempts=1',
    ]);
    expect(json.variants[0].amplification).toBe(4);
  });

  it('--duration 10s shortens the run', async () => {
    const full = await resultOf(['run', 'retry-storm']);
    const short = await resultOf(['run', 'retry-storm', '--duration', '10s']);
    expect(full.json.variants[0].durationMs).toBe(60_000);
    expect(short.json.variants[0].durationMs).toBe(10_000);
    expect(short.json.variants[0].roots.offered).toBe(full.json.variants[0].roots.offered / 6);
    expect(short.json.variants[0].upstream.attempts).toBe(full.json.variants[0].upstream.attempts / 6);
    expect(short.json.variants[0].amplification).toBe(27);
  });

  it('--variant engine runs that variant only, named after it', async () => {
    const r = await cli(['run', 'retry-storm', '--variant', 'engine']);
    expectOnlyProgress(r.err);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[2].trim()).toBe('engine');
    const { json } = await resultOf(['run', 'retry-storm', '--variant', 'engine']);
    expect(json.variants.map((v: any) => v.name)).toEqual(['engine']);
    expect(json.variants[0].amplification).toBeLessThan(1.5);
  });

  it('takes a scenario file by path, relative to the working directory', async () => {
    // Not the process's directory: the path must be resolved against io.cwd.
    const r = await cli(['run', './retry-storm.yaml', '-q', '--duration', '5s'], { cwd: BUNDLED_DIR });
    expectOnlyProgress(r.err);
    expect(r.out.trimEnd()).toMatch(HEADLINE_27);
  });
});

describe('stormlab compare', () => {
  it('prints naive and engine side by side', async () => {
    const r = await cli(['compare', 'retry-storm']);
    expectOnlyProgress(r.err);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    const head = /^amplification naive 27\.0× · engine (\S+)×$/.exec(lines[0]);
    expect(head, lines[0]).not.toBeNull();
    expect(Number(head![1])).toBeLessThan(1.5);
    expect(lines[2].trim().split(/ +/)).toEqual(['naive', 'engine']);
    expect(lines[3]).toMatch(new RegExp(`^amplification +27\\.0× +${head![1].replace('.', '\\.')}×$`));
  });

  it('--json FILE holds both variants in order, the engine one matching the headline', async () => {
    const r = await cli(['compare', 'retry-storm', '--json', 'c.json', '-q']);
    const json = JSON.parse(r.files.get('c.json')!);
    expect(json).toMatchObject({ schema: 'stormlab.result/v1', scenario: 'retry-storm', seed: 1 });
    expect(json.variants.map((v: any) => v.name)).toEqual(['naive', 'engine']);
    json.variants.forEach(expectVariantShape);
    expect(json.variants[0].amplification).toBe(27);
    expect(json.variants[1].amplification).toBeLessThan(1.5);
    expect(json.timing.variants.map((v: any) => v.name)).toEqual(['naive', 'engine']);
  });

  it('--variants picks and orders them', async () => {
    const { json } = await resultOf(['compare', 'retry-storm', '--variants', 'engine,naive']);
    expect(json.variants.map((v: any) => v.name)).toEqual(['engine', 'naive']);
    const one = await resultOf(['compare', 'retry-storm', '--variants', ' naive ']);
    expect(one.json.variants.map((v: any) => v.name)).toEqual(['naive']);
  });
});

describe('determinism', () => {
  it('the same command twice gives byte-identical JSON outside timing, whatever the wall clock did', async () => {
    const argv = ['compare', 'retry-storm', '--duration', '20s'];
    const a = await resultOf(argv, 0);
    const b = await resultOf(argv, 7);
    // The wall clocks differ, so timing does: the rest must not.
    expect(a.json.timing).not.toEqual(b.json.timing);
    expect(withoutTiming(b.text)).toBe(withoutTiming(a.text));
  });

  it('run is as deterministic as compare', async () => {
    const a = await resultOf(['run', 'brownout', '--duration', '20s'], 3);
    const b = await resultOf(['run', 'brownout', '--duration', '20s'], 5);
    expect(withoutTiming(b.text)).toBe(withoutTiming(a.text));
  });

  it('a streamed scenario is as deterministic (stream events, guard timers, TTFT histograms)', async () => {
    const argv = ['compare', 'stream-faults', '--duration', '30s'];
    const a = await resultOf(argv, 0);
    const b = await resultOf(argv, 9);
    expect(withoutTiming(b.text)).toBe(withoutTiming(a.text));
    expect(a.json.variants.map((v: any) => v.truncatedSuccesses)).toEqual([
      expect.any(Number),
      expect.any(Number),
      0,
      0,
      0,
    ]);
    // Only the variant whose models continue prefills reports resumed streams.
    expect(a.json.variants.map((v: any) => v.resumedStreams)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      expect.any(Number),
    ]);
  });

  it('--seed 2 gives another result, and records its seed', async () => {
    const argv = ['compare', 'retry-storm', '--duration', '20s'];
    const one = await resultOf(argv);
    const two = await resultOf([...argv, '--seed', '2']);
    expect(one.json.seed).toBe(1);
    expect(two.json.seed).toBe(2);
    expect(two.json.variants).not.toEqual(one.json.variants);
    const again = await resultOf([...argv, '--seed', '2']);
    expect(withoutTiming(again.text)).toBe(withoutTiming(two.text));
  });
});

describe('compare stream-faults', () => {
  it('shows naive, sdk, engine, engine-complete and engine-resume with their truncated successes, resumed streams and time to first token', async () => {
    const r = await cli(['compare', 'stream-faults', '--no-ui']);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(
      lines
        .find((l) => l.trim().startsWith('naive'))
        ?.trim()
        .split(/ +/),
    ).toEqual(['naive', 'sdk', 'engine', 'engine-complete', 'engine-resume']);
    const row = (label: string) => lines.filter((l) => l.trim().startsWith(label)).map((l) => l.trim().split(/ {2,}/));
    const [run, llm] = [row('truncated successes')[0], row('truncated successes').at(-1)!];
    expect(run.at(-1)).toBe('0');
    expect(Number(run[1].replace(/,/g, ''))).toBeGreaterThan(0);
    expect(llm.at(-1)).toBe('0');
    expect(row('ttft p99')).toHaveLength(1); // the llm layer's only: the agent layer does not stream
    // Resumed streams: the run's and the llm layer's, a count for engine-resume only.
    const resumed = row('resumed streams');
    expect(resumed).toHaveLength(2);
    for (const r of resumed) {
      expect(r.slice(1, 5)).toEqual(['—', '—', '—', '—']);
      expect(Number(r[5].replace(/,/g, ''))).toBeGreaterThan(0);
    }
  });
});

describe('stormlab scenarios', () => {
  it('lists the bundled scenarios with their descriptions', async () => {
    const r = await cli(['scenarios']);
    expectOnlyProgress(r.err);
    expect(r.code).toBe(0);
    const names = BUNDLED_NAMES;
    const width = Math.max(...names.map((n) => n.length));
    const lines = r.out.split('\n').filter((l) => l !== '');
    for (const name of names) {
      const description = (
        YAML.parse(readFileSync(join(BUNDLED_DIR, `${name}.yaml`), 'utf8')) as { description: string }
      ).description;
      expect(description.length).toBeGreaterThan(20);
      expect(lines).toContain(`${name.padEnd(width)}  ${description}`);
    }
    expect(lines.slice(0, names.length).map((l) => l.split(' ')[0])).toEqual(names);
    // The hint names a scenario the way that works from any directory.
    expect(lines[names.length]).toBe(
      'run one: npx stormlab run retry-storm   compare: npx stormlab compare retry-storm',
    );
    expect(lines).toHaveLength(names.length + 1);
  });
});

describe('help', () => {
  it('--help prints usage on stdout and exits 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: stormlab /);
    for (const c of ['run', 'compare', 'scenarios']) expect(r.out).toContain(`  ${c} `);
    const run = await cli(['run', '--help']);
    expect(run.code).toBe(0);
    for (const o of ['--seed', '--set', '--duration', '--json', '--quiet', '--variant']) expect(run.out).toContain(o);
  });

  it('--version prints the package version and exits 0', async () => {
    const r = await cli(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
