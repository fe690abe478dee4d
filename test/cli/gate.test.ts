import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_DIR } from '../../src/scenario/bundled.js';
import { cli, tempDir } from './capture-io.js';

const SHORT = ['--duration', '10s'];
const HOLDS = 'variants.engine.amplification < 1.5';
const FAILS = 'variants.naive.amplification < 1.5';

describe('gates on run and compare', () => {
  it('exits 0 when every expectation holds, and shows what held with its figure', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '--expect', HOLDS]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^held\s+engine\s+variants\.engine\.amplification < 1\.5\s+[\d.]+×\s+< 1\.5$/m);
    expect(r.out).toMatch(/^all 3 checks held$/m); // the scenario's own two, and this one
  });

  it('exits 1 when one fails, after the summary, with the table of what held and what did not', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '--expect', FAILS, '--expect', 'successRate >= 0%']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^amplification naive 27\.0× · engine/);
    expect(r.out).toMatch(/^FAILED\s+naive\s+variants\.naive\.amplification < 1\.5\s+27\.0×\s+< 1\.5$/m);
    expect(r.out).toMatch(/^held\s+engine\s+successRate >= 0%/m);
    expect(r.out).toMatch(/^1 of 5 checks failed$/m);
  });

  it('with --quiet shows the headline and only the failures', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '-q', '--expect', FAILS]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter((l) => l.startsWith('held'))).toEqual([]);
    expect(r.out).toMatch(/^FAILED\s+naive/m);
    expect(r.out).toMatch(/^1 of 3 checks failed$/m); // the verdict counts every check, not the rows shown
  });

  it('writes JUnit with one test case per judged expectation and variant, and a Markdown summary', async () => {
    const r = await cli([
      'compare',
      'retry-storm',
      ...SHORT,
      '--expect',
      FAILS,
      '--junit',
      'j.xml',
      '--markdown',
      's.md',
    ]);
    expect(r.code).toBe(1);
    const xml = r.files.get('j.xml')!;
    expect(xml).toMatch(
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="stormlab retry-storm" tests="3" failures="1" skipped="0"/,
    );
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml).toContain(
      '<testcase classname="stormlab retry-storm.naive" name="variants.naive.amplification &lt; 1.5">',
    );
    expect(xml).toContain('<failure message="actual 27.0×, expected &lt; 1.5" type="expectation">');
    const md = r.files.get('s.md')!;
    expect(md).toMatch(/^### stormlab retry-storm: ❌ 1 of 3 failed$/m);
    expect(md).toContain('| ❌ failed | `variants.naive.amplification < 1.5` | naive | 27.0× | < 1.5 |');
  });

  it('puts the judged checks in the --json result', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '--expect', HOLDS, '--json', 'r.json']);
    const file = JSON.parse(r.files.get('r.json')!);
    expect(file.checks).toContainEqual({
      name: HOLDS,
      status: 'pass',
      group: 'engine',
      actual: expect.stringMatching(/×$/),
      expected: '< 1.5',
    });
  });

  it('leaves expectations of variants not run to compare: one line, skipped in JUnit, exit 0', async () => {
    const r = await cli(['run', 'retry-storm', ...SHORT, '--junit', 'j.xml']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('2 expectations are for variants not run here (naive, engine): compare runs them\n');
    expect(r.files.get('j.xml')).toMatch(/tests="2" failures="0" skipped="2"/);
  });

  it("judges the scenario file's expect: with run --variant", async () => {
    const r = await cli(['run', 'retry-storm', ...SHORT, '--variant', 'engine']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^held\s+engine\s+variants\.engine\.amplification < 1\.5/m);
    expect(r.out).toContain('1 expectation is for a variant not run here (naive): compare runs them');
  });

  it('refuses a bad --expect before running anything (exit 2, one line)', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '--expect', 'amplificaton < 1.5']);
    expect(r).toMatchObject({
      code: 2,
      out: '',
      err: 'stormlab: --expect "amplificaton < 1.5": unknown metric "amplificaton" (did you mean amplification?)\n',
    });
  });

  it('reports every bad expectation of a scenario file with its place, before running (exit 2)', async () => {
    const text = readFileSync(join(BUNDLED_DIR, 'retry-storm.yaml'), 'utf8').replace(
      /^expect:[\s\S]*$/m,
      'expect:\n  - layers.lm.p99 < 2s\n  - recovery < 30\n  - goodput > 10\n',
    );
    const cwd = tempDir({ 'gate.yaml': text });
    const r = await cli(['run', 'gate.yaml', ...SHORT], { cwd });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      [
        'gate.yaml: expect[0]: unknown layer "lm" in "layers.lm.p99" (did you mean llm?); layers: orchestrator, agent, llm',
        'gate.yaml: expect[1]: "30" does not fit recovery (no unit): recovery is a duration: write 20s, 500ms or 2m',
        '',
      ].join('\n'),
    );
  });

  it('says so when --junit cannot be written (exit 2)', async () => {
    const r = await cli(['compare', 'retry-storm', ...SHORT, '-q', '--junit', 'nope/j.xml'], { writeError: 'ENOENT' });
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^amplification naive/); // the run's summary is not lost
    expect(r.err).toBe('stormlab: --junit: cannot write nope/j.xml: its directory does not exist\n');
  });
});

describe('report --expect: gates on a saved result', () => {
  it('judges the file as run would have, exit 1 on a failure, and refuses a name the file does not have', async () => {
    const cwd = tempDir();
    await cli(['compare', 'retry-storm', ...SHORT, '-q', '--json', 'r.json'], { cwd: process.cwd() }).then((r) =>
      writeFileSync(join(cwd, 'r.json'), r.files.get('r.json')!),
    );
    const held = await cli(['report', 'r.json', '--expect', HOLDS, '--junit', 'j.xml'], { cwd });
    expect(held.code).toBe(0);
    expect(held.out).toMatch(/^held\s+engine\s+variants\.engine\.amplification < 1\.5/m);
    expect(held.files.get('j.xml')).toMatch(/tests="1" failures="0"/);
    const failed = await cli(['report', 'r.json', '--expect', FAILS], { cwd });
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/^FAILED\s+naive/m);
    const typo = await cli(['report', 'r.json', '--expect', 'layers.lm.p99 < 1s'], { cwd });
    expect(typo).toMatchObject({
      code: 2,
      out: '',
      err: 'stormlab: --expect "layers.lm.p99 < 1s": unknown layer "lm" in "layers.lm.p99" (did you mean llm?); layers: orchestrator, agent, llm\n',
    });
  });
});
