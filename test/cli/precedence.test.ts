import { beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir, type CliRun } from './capture-io.js';

/**
 * Two layers retrying naively at full outage: the leaf's amplification is exactly attempts²
 * (3 → 9×, 2 → 4×, 1 → 1×), so which value of `layers[*].retry.attempts` ran reads off the
 * figure. Variant `gentle` sets it to 2; every test sets it again on the command line, which
 * must win: the file, then the variant, then the command line.
 */
const STORM = `name: storm
seed: 1
duration: 5s
drain: 60s
arrival: { type: constant, rate: 4 }
tokens: { prompt: 100, completion: 20 }
layers:
  - { name: agent, fanout: 1, retry: { policy: naive, attempts: 3 } }
  - { name: llm, retry: { policy: naive, attempts: 3 }, models: [primary] }
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 10ms, tpot: 1ms }
  faults:
    - { kind: outage, from: 0s, to: 10m, status: 503 }
variants:
  naive:
    layers[*].retry: { policy: naive, attempts: 3 }
  gentle:
    layers[*].retry.attempts: 2
  seeded:
    seed: 3
  bare:
    upstream.faults: []
`;

const ONE = ['--set', 'layers[*].retry.attempts=1'];

let dir: string;
beforeAll(() => {
  dir = tempDir({ 'storm.yaml': STORM });
});

function stormlab(args: string[]): Promise<CliRun> {
  return cli(args, { cwd: dir });
}

/** The result file a command wrote with `--json out.json`. */
async function resultOf(args: string[]): Promise<{ r: CliRun; json: any }> {
  const r = await stormlab([...args, '--json', 'out.json', '--no-ui']);
  expect(r.code, r.err).toBe(0);
  return { r, json: JSON.parse(r.files.get('out.json')!) };
}

const amplifications = (json: any): Record<string, number> =>
  Object.fromEntries(json.variants.map((v: any) => [v.name, v.amplification]));

describe('precedence: scenario → variant → command line (the command line wins)', () => {
  it('run: a --set wins over the variant it runs, as over the file', async () => {
    expect(amplifications((await resultOf(['run', 'storm.yaml', '--variant', 'gentle'])).json)).toEqual({
      gentle: 4,
    });
    expect(amplifications((await resultOf(['run', 'storm.yaml', '--variant', 'gentle', ...ONE])).json)).toEqual({
      gentle: 1,
    });
    expect(amplifications((await resultOf(['run', 'storm.yaml', ...ONE])).json)).toEqual({ storm: 1 });
    // --seed is the command line too: over a variant's seed.
    const { json } = await resultOf(['run', 'storm.yaml', '--variant', 'seeded', '--seed', '9']);
    expect(json.seed).toBe(9);
    // The field is named once: the --seed, with the variant's value it replaced.
    expect(json.variants[0].effective.overrides).toEqual([
      { path: 'seed', value: 9, from: '--seed', was: 3, wasFrom: 'variant seeded' },
    ]);
  });

  it('compare: the --set lands in every variant, over what each set', async () => {
    const base = ['compare', 'storm.yaml', '--variants', 'naive,gentle'];
    expect(amplifications((await resultOf(base)).json)).toEqual({ naive: 9, gentle: 4 });
    const { r, json } = await resultOf([...base, ...ONE]);
    expect(amplifications(json)).toEqual({ naive: 1, gentle: 1 });
    expect(r.out.split('\n')[0]).toBe('amplification naive 1.00× · gentle 1.00×');
    // The summary names each overridden field once, its value and where it came from.
    const overrides = r.out.slice(r.out.indexOf('overrides ('));
    expect(overrides.split('\n').slice(1, 4)).toEqual([
      // gentle's own attempts: 2 is gone, replaced: the --set's line says so.
      '  variant naive  layers[*].retry = {policy: naive, attempts: 3} (as the scenario had it)',
      "  --set          layers[*].retry.attempts = 1 (over variant naive's 3; over variant gentle's 2)",
      '',
    ]);
  });

  it('compare: a --set that breaks one of its variants is refused in one line naming both', async () => {
    const r = await stormlab(['compare', 'storm.yaml', '--set', 'upstream.faults[0].status=500']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      'stormlab: --set "upstream.faults[0].status=500" with variant bare: upstream.faults has 0 items, so [0] is past its end\n',
    );
    // The variants it does not break still run it.
    const ok = await stormlab([
      'compare',
      'storm.yaml',
      '--variants',
      'naive,gentle',
      '--set',
      'upstream.faults[0].status=500',
      '-q',
    ]);
    expect(ok.code, ok.err).toBe(0);
  });

  it('sweep: a point value is a command-line value, so it wins over the variant', async () => {
    const r = await stormlab([
      'sweep',
      'storm.yaml',
      '--variant',
      'gentle',
      '--param',
      'layers[*].retry.attempts=1,3',
      '--metric',
      'amplification',
      '--workers',
      '1',
      '--json',
      'sweep.json',
    ]);
    expect(r.code, r.err).toBe(0);
    const file = JSON.parse(r.files.get('sweep.json')!);
    expect(file.points.map((p: any) => [p.values, p.figures.amplification])).toEqual([
      [[1], 1],
      [[3], 9],
    ]);
    // What every point ran before its values: the variant's document.
    expect(file.effective.overrides).toEqual([
      { path: 'layers[*].retry.attempts', value: 2, from: 'variant gentle', was: 3, wasFrom: 'scenario' },
    ]);
    expect(file.effective.document.layers[0].retry).toEqual({ policy: 'naive', attempts: 2 });
    // A point is that document with its values on top: run so, it gives the point's figures.
    const again = tempDir({ 'base.json': JSON.stringify(file.effective.document) });
    const point = await cli(['run', 'base.json', '--set', 'layers[*].retry.attempts=3', '--json', 'p.json', '-q'], {
      cwd: again,
    });
    expect(point.code, point.err).toBe(0);
    const ran = JSON.parse(point.files.get('p.json')!).variants[0];
    expect([ran.amplification, ran.goodput, ran.successRate]).toEqual([
      file.points[1].figures.amplification,
      file.points[1].figures.goodput,
      file.points[1].figures.successRate,
    ]);
  });

  it('tune: the points, and the current values, are the variant under the command line', async () => {
    const tune = (extra: string[]) =>
      stormlab([
        'tune',
        'storm.yaml',
        '--variant',
        'gentle',
        '--params',
        'layers[*].retry.attempts=1:3:int',
        '--minimize',
        'amplification',
        '--seeds',
        '1',
        '--workers',
        '1',
        '--budget',
        '3',
        '--json',
        'tune.json',
        ...extra,
      ]);
    const plain = await tune([]);
    expect(plain.code, plain.err).toBe(0);
    const a = JSON.parse(plain.files.get('tune.json')!);
    expect(a.params[0].current).toBe(2); // the variant's value
    expect(a.baseline.figures.amplification).toBe(4);
    expect(a.best).toMatchObject({ values: [1], figures: { amplification: 1 } });
    const points = Object.fromEntries(a.points.map((p: any) => [p.values[0], p.figures.amplification]));
    expect(points).toMatchObject({ 1: 1, 3: 9 });
    // A --set over the variant moves the current values with it.
    const set = await tune(['--set', 'layers[*].retry.attempts=3']);
    const b = JSON.parse(set.files.get('tune.json')!);
    expect(b.params[0].current).toBe(3);
    expect(b.baseline.figures.amplification).toBe(9);
    expect(b.effective.overrides.at(-1)).toEqual({
      path: 'layers[*].retry.attempts',
      value: 3,
      from: '--set',
      was: 2,
      wasFrom: 'variant gentle',
    });
  });
});

describe('the effective scenario: what ran, in every result', () => {
  it('is the document that ran: saved and run as written, it gives the same figures', async () => {
    const { json } = await resultOf(['run', 'storm.yaml', '--variant', 'gentle', ...ONE, '--duration', '3s']);
    const [v] = json.variants;
    expect(v.effective.document).toMatchObject({ duration: '3s', layers: [{ retry: { attempts: 1 } }, {}] });
    const again = tempDir({ 'ran.json': JSON.stringify(v.effective.document) });
    const r = await cli(['run', 'ran.json', '--json', 'again.json', '--no-ui'], { cwd: again });
    expect(r.code, r.err).toBe(0);
    const w = JSON.parse(r.files.get('again.json')!).variants[0];
    const figures = ({ name, effective, ...rest }: any) => rest;
    expect(figures(w)).toEqual(figures(v));
    // Run as written, nothing was overridden.
    expect(w.effective.overrides).toEqual([]);
  });

  it('names a bundled scenario run as written the same way as one resolved from its file', async () => {
    const bundled = await resultOf(['compare', 'retry-storm', '--duration', '20s']);
    const naive = bundled.json.variants[0];
    expect(naive.effective.overrides).toEqual([
      {
        path: 'layers[*].retry',
        value: { policy: 'naive', attempts: 3 },
        from: 'variant naive',
        was: { policy: 'naive', attempts: 3 },
        wasFrom: 'scenario',
      },
      { path: 'duration', value: '20s', from: '--duration', was: '60s', wasFrom: 'scenario' },
    ]);
    // Without a flag it comes from what the build resolved (no YAML parser): the same record.
    const asBuilt = await resultOf(['compare', 'retry-storm']);
    expect(asBuilt.json.variants[0].effective.overrides).toEqual(naive.effective.overrides.slice(0, 1));
  });
});
