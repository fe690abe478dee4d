import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir, type CaptureOptions } from './capture-io.js';

/** A short real compare of the bundled retry-storm, as a team would keep for a baseline. */
const SHORT = ['--duration', '10s', '-q'];
/** The engine variant turned naive: every layer retries 3 times, amplification 27×. */
const REGRESSED = ['--set', 'variants.engine={"layers[*].retry": {policy: naive, attempts: 3}}'];

let dir: string;

/** The result JSON of a compare; `code` 1 when the scenario's own expectations fail (the engine turned naive). */
async function result(extra: string[], code = 0): Promise<string> {
  const r = await cli(['compare', 'retry-storm', ...SHORT, '--json', 'out.json', ...extra]);
  expect(r.code, r.err).toBe(code);
  return r.files.get('out.json')!;
}

beforeAll(async () => {
  const base = await result([]);
  const files: Record<string, string> = {
    'base.json': base,
    'same.json': await result([]),
    'regressed.json': await result(REGRESSED, 1),
    'seed2.json': await result(['--seed', '2']),
    'naive-only.json': await result(['--variants', 'naive']),
    'engine-only.json': await result(['--variants', 'engine']),
    'not-json.json': '{"schema": "stormlab.result/v1", ',
    'empty.json': '',
    'sweep.json': '{"schema": "stormlab.sweep/v1", "grid": []}',
    'list.json': '[]',
  };
  const broken = JSON.parse(base);
  broken.variants[1].roots.latencyMs.p99 = 'fast';
  files['broken.json'] = JSON.stringify(broken);
  const renamed = JSON.parse(base);
  renamed.variants.forEach((v: { name: string }) => (v.name = `${v.name}-v2`));
  files['renamed.json'] = JSON.stringify(renamed);
  dir = tempDir(files);
  mkdirSync(join(dir, 'a-dir'));
}, 60_000);

const diff = (argv: string[], options: CaptureOptions = {}) => cli(['diff', ...argv], { cwd: dir, ...options });

/** A bad input: exit 2, one line on stderr naming the problem, no stack, nothing on stdout. */
async function expectUsage(argv: string[], line: string | RegExp, options: CaptureOptions = {}): Promise<void> {
  const r = await diff(argv, options);
  expect(r.code).toBe(2);
  expect(r.out).toBe('');
  expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
  if (typeof line === 'string') expect(r.err).toBe(`${line}\n`);
  else expect(r.err.trimEnd()).toMatch(line);
}

describe('stormlab diff: exit 0', () => {
  it('the same run twice: a summary line, every check held, exit 0', async () => {
    const r = await diff(['base.json', 'same.json']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(
      'comparing same.json with base.json: retry-storm, seed 1 · variants naive, engine · tolerance 5 %',
    );
    expect(r.out).toMatch(/^held +naive +amplification +27\.0× \(unchanged\) +≤ 28\.4× \(base 27\.0× \+5 %\)$/m);
    expect(r.out).toMatch(/^held +engine +wastedTokens +0 \(unchanged\) +≤ 1,000 \(base 0 \+ floor 1,000\)$/m);
    expect(r.out).toContain('\nall 18 checks held\n');
    expect(r.out).not.toContain('FAILED');
  });

  it('-q with nothing failed prints nothing', async () => {
    const r = await diff(['base.json', 'same.json', '-q']);
    expect([r.code, r.out, r.err]).toEqual([0, '', '']);
  });

  it('per-metric tolerances are taken and shown', async () => {
    const r = await diff([
      'base.json',
      'same.json',
      '--tolerance',
      '5%',
      '--tolerance',
      'amplification=2%',
      '--tolerance',
      'p99=10%',
    ]);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/ · tolerance 5 % \(amplification 2 %, p99 10 %\)$/);
    expect(r.out).toMatch(/^held +engine +roots\.p99 +\S+ ms \(unchanged\) +≤ \S+ ms \(base \S+ ms \+10 %\)$/m);
  });
});

describe('stormlab diff: exit 1 on a regression', () => {
  it('the engine variant turned naive: amplification and p99 fail, the table says so, exit 1', async () => {
    const r = await diff(['base.json', 'regressed.json']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('');
    expect(r.out).toMatch(
      /^FAILED +engine +amplification +27\.0× \(\+[\d.,k]+ %\) +≤ 0\.03× \(base 0\.02× \+ floor 0\.01×\)$/m,
    );
    expect(r.out).toMatch(/^ +rose [\d.,k]+ % \(0\.02× → 27\.0×\), more than the 0\.01× floor allows$/m);
    expect(r.out).toMatch(/^FAILED +engine +roots\.p99 /m);
    expect(r.out).not.toMatch(/^FAILED +naive/m);
    expect(r.out).toMatch(/\n\d+ of 18 checks failed\n/);
  });

  it('the reverse: the improvements are reported, and pass', async () => {
    const r = await diff(['regressed.json', 'base.json']);
    expect(r.out).toMatch(/^held +engine +amplification +0\.02× \(-99\.9 %, better\)/m);
    expect(r.out).toMatch(/^improved beyond the tolerance: engine amplification, engine roots\.p99/m);
  });

  it('writes --junit, --markdown and --json, and -q shows only the failures', async () => {
    const r = await diff([
      'base.json',
      'regressed.json',
      '-q',
      '--junit',
      'd.xml',
      '--markdown',
      'd.md',
      '--json',
      'd.json',
    ]);
    expect(r.code).toBe(1);
    expect(r.out).not.toMatch(/^held/m);
    expect(r.out).not.toContain('comparing');
    expect(r.out).toMatch(/^FAILED +engine +amplification/m);
    expect(r.files.get('d.xml')).toMatch(
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="stormlab diff retry-storm" tests="18" failures="[1-9]\d*" skipped="0" errors="0">/,
    );
    expect(r.files.get('d.md')).toMatch(/^### stormlab diff retry-storm: ❌ \d+ of 18 failed\n/);
    const json = JSON.parse(r.files.get('d.json')!);
    expect(json).toMatchObject({
      schema: 'stormlab.diff/v1',
      base: { file: 'base.json', scenario: 'retry-storm', seed: 1, mode: 'sim' },
      new: { file: 'regressed.json', scenario: 'retry-storm', seed: 1, mode: 'sim' },
      tolerance: { default: 0.05, metrics: {}, floors: { wastedTokens: 1000 } },
    });
    expect(json.checks).toHaveLength(18);
    expect(json.checks.find((c: any) => c.group === 'engine' && c.name === 'amplification')).toMatchObject({
      status: 'fail',
      verdict: 'regressed',
      actual: expect.stringMatching(/^27\.0× /),
    });
  });

  it('a variant of the base missing from the new result fails; one only in the new result is noted', async () => {
    const r = await diff(['naive-only.json', 'base.json']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^skipped +engine +variant +new +in the base$/m);
    const gone = await diff(['base.json', 'engine-only.json']);
    expect(gone.code).toBe(1);
    expect(gone.out).toMatch(
      /^FAILED +naive +variant +missing +in the new result\n +variant naive is in the base but not in the new result$/m,
    );
  });

  it('another seed: compared anyway, with a one-line warning on stderr', async () => {
    const r = await diff(['base.json', 'seed2.json']);
    expect([0, 1]).toContain(r.code);
    expect(r.err).toBe(
      'stormlab: warning: base.json and seed2.json differ in seed (1 vs 2): their figures are not comparable point for point; comparing anyway\n',
    );
    expect(r.out).toMatch(/all 18 checks held|of 18 checks failed/);
  });
});

describe('stormlab diff: bad input, exit 2', () => {
  it('a missing file, a directory', async () => {
    await expectUsage(['base.json', 'gone.json'], 'stormlab: cannot read gone.json: no such file');
    await expectUsage(['a-dir', 'base.json'], 'stormlab: cannot read a-dir: it is a directory');
  });

  it('not JSON, empty, not a result', async () => {
    await expectUsage(
      ['base.json', 'not-json.json'],
      'stormlab: not-json.json:1:34: JSON syntax error: Expected double-quoted property name',
    );
    await expectUsage(
      ['empty.json', 'base.json'],
      /^stormlab: empty\.json: the file is empty, expected stormlab\.result\/v1 .*$/,
    );
    await expectUsage(
      ['base.json', 'sweep.json'],
      'stormlab: sweep.json: a sweep file (stormlab.sweep/v1), expected stormlab.result/v1 (from run or compare --json)',
    );
    await expectUsage(
      ['list.json', 'base.json'],
      'stormlab: list.json: expected a JSON object with a "schema" field, got an empty array',
    );
  });

  it("a diff's own JSON is not a result either", async () => {
    const r = await diff(['base.json', 'regressed.json', '-q', '--json', 'd.json']);
    writeFileSync(join(dir, 'diff-out.json'), r.files.get('d.json')!);
    await expectUsage(
      ['diff-out.json', 'base.json'],
      'stormlab: diff-out.json: unknown schema "stormlab.diff/v1", expected stormlab.result/v1 (from run or compare --json) or stormlab.sweep/v1 (from sweep --json)',
    );
  });

  it('a broken field: the file and the JSON path', async () => {
    await expectUsage(
      ['base.json', 'broken.json'],
      'stormlab: broken.json: variants[1].roots.latencyMs.p99: expected a number, got "fast"',
    );
  });

  it('no variant in common', async () => {
    await expectUsage(
      ['base.json', 'renamed.json'],
      'stormlab: no variant in common: base.json has variants naive, engine, renamed.json has variants naive-v2, engine-v2',
    );
    await expectUsage(
      ['naive-only.json', 'engine-only.json'],
      'stormlab: no variant in common: naive-only.json has variants naive, engine-only.json has variants engine',
    );
  });

  it('a bad tolerance, an unknown metric with a did-you-mean', async () => {
    await expectUsage(
      ['base.json', 'same.json', '--tolerance', '5'],
      'stormlab: --tolerance "5": a bare number is a share from 0 to 1; write 5% for 5 percent',
    );
    await expectUsage(
      ['base.json', 'same.json', '--tolerance', 'lots'],
      'stormlab: --tolerance "lots": expected a share like 5% or 0.05, or metric=share like amplification=2%',
    );
    await expectUsage(
      ['base.json', 'same.json', '--tolerance', 'amplificaton=2%'],
      /^stormlab: --tolerance: unknown metric "amplificaton" \(did you mean amplification\?\); metrics: amplification, goodput, /,
    );
    await expectUsage(
      ['base.json', 'same.json', '--tolerance', 'layers.lm.p99=2%'],
      /^stormlab: --tolerance: unknown metric "layers\.lm\.p99" \(did you mean layers\.llm\.p99\?\)/,
    );
  });

  it('a missing argument, an unknown option', async () => {
    await expectUsage(['base.json'], /^stormlab: missing required argument 'new'/);
    await expectUsage(['base.json', 'same.json', '--tolerence', '5%'], /^stormlab: unknown option '--tolerence'/);
  });

  it('an output that cannot be written', async () => {
    await expectUsage(
      ['base.json', 'same.json', '-q', '--json', 'gone/d.json'],
      'stormlab: --json: cannot write gone/d.json: its directory does not exist',
      { writeError: 'ENOENT' },
    );
    await expectUsage(
      ['base.json', 'same.json', '-q', '--junit', 'gone/d.xml'],
      'stormlab: --junit: cannot write gone/d.xml: its directory does not exist',
      { writeError: 'ENOENT' },
    );
  });
});
