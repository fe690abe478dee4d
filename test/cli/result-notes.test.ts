import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { captureIo, cli, tempDir, type CliRun } from './capture-io.js';

/**
 * Answers take a minute and the drain is 1 s: every root is still in flight when the run
 * ends. The figures read as if all were well (1.00×: no attempt failed, so none was retried);
 * only the note says that nothing finished.
 */
const CUT = `name: cut
duration: 5s
drain: 1s
arrival: { type: constant, rate: 4 }
tokens: { prompt: 100, completion: 20 }
layers:
  - { name: agent, fanout: 1, retry: { policy: naive, attempts: 3 } }
  - { name: llm, retry: { policy: naive, attempts: 3 }, models: [primary] }
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 1m, tpot: 1ms }
expect:
  - variants.engine.amplification < 2
`;

/** 0.1 roots a second for 1 s: not one root arrives. */
const NONE = `name: quiet
duration: 1s
arrival: { type: constant, rate: 0.1 }
tokens: { prompt: 100, completion: 20 }
layers:
  - { name: llm, retry: { policy: naive, attempts: 3 }, models: [primary] }
upstream:
  models:
    - { name: primary, slots: 8, queue: 8, ttft: 10ms, tpot: 1ms }
`;

const UNFINISHED = (v: string) =>
  `${v}: 20 of 20 root tasks (100.0 %) had not finished when the 1s drain (the wait after arrivals stop) ran out; they count as offered, not as ok, late or failed`;

let dir: string;
beforeAll(() => {
  dir = tempDir({ 'cut.yaml': CUT, 'none.yaml': NONE });
});

function stormlab(args: string[]): Promise<CliRun> {
  return cli(args, { cwd: dir });
}

describe('results that say what they are', () => {
  it('roots the drain cut off: a line under the headline, and the count, share and drain as fields', async () => {
    const r = await stormlab(['compare', 'cut.yaml', '--no-ui', '--json', 'out.json']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'amplification naive 1.00× · engine 1.00×',
      `note: ${UNFINISHED('naive')}`,
      `note: ${UNFINISHED('engine')}`,
    ]);
    const json = JSON.parse(r.files.get('out.json')!);
    expect(json.notes).toEqual([
      { kind: 'unfinished', roots: 20, share: 1, variant: 'naive', drainMs: 1000, message: UNFINISHED('naive') },
      { kind: 'unfinished', roots: 20, share: 1, variant: 'engine', drainMs: 1000, message: UNFINISHED('engine') },
    ]);
    // `report` reads the notes back from the file, and prints them as run did.
    writeFileSync(join(dir, 'out.json'), r.files.get('out.json')!);
    const again = await cli(['report', 'out.json'], { cwd: dir });
    expect(again.code, again.err).toBe(0);
    for (const v of ['naive', 'engine']) expect(again.out).toContain(`note: ${UNFINISHED(v)}\n`);
    // -q keeps the notes on how the headline reads.
    const quiet = await stormlab(['run', 'cut.yaml', '-q']);
    expect(quiet.out).toBe(`amplification 1.00× · goodput 0.00/s · success 0.0 %\nnote: ${UNFINISHED('cut')}\n`);
  });

  it('a run with no roots says so, and shows no amplification rather than 0.00×', async () => {
    const r = await stormlab(['run', 'none.yaml', '--no-ui', '--json', 'out.json']);
    expect(r.code, r.err).toBe(0);
    const message =
      'quiet: no root task arrived, so nothing was measured (its amplification, goodput and shares read 0, not as measured figures)';
    expect(r.out.split('\n').slice(0, 2)).toEqual([
      'amplification — · goodput 0.00/s · success 0.0 %',
      `note: ${message}`,
    ]);
    expect(r.out).toMatch(/^amplification +—$/m);
    expect(JSON.parse(r.files.get('out.json')!).notes).toEqual([{ kind: 'no-roots', variant: 'quiet', message }]);
  });

  it('expectations of a variant not run: a note, in the JSON, the Markdown and the JUnit files too', async () => {
    const r = await stormlab([
      'run',
      'cut.yaml',
      '--no-ui',
      '--json',
      'out.json',
      '--markdown',
      'gate.md',
      '--junit',
      'junit.xml',
      '--expect',
      'amplification < 5',
    ]);
    expect(r.code, r.err).toBe(0);
    const skipped = '1 expectation is for a variant not run here (engine): compare runs them';
    expect(r.out).toContain(`\nnote: ${skipped}\n`);
    const json = JSON.parse(r.files.get('out.json')!);
    expect(json.notes.map((n: any) => n.kind)).toEqual(['unfinished', 'skipped-expectations']);
    expect(json.notes[1]).toEqual({
      kind: 'skipped-expectations',
      variants: ['engine'],
      count: 1,
      reason: 'not-run',
      message: skipped,
    });
    const md = r.files.get('gate.md')!;
    expect(md).toContain(`- **Note:** ${UNFINISHED('cut')}\n`);
    expect(md).toContain(`- **Note:** ${skipped}\n`);
    const junit = r.files.get('junit.xml')!;
    // Each note in the suite of the variant it concerns.
    expect(junit).toMatch(/name="stormlab cut · cut"[\s\S]*<system-out>cut: 20 of 20 root tasks[^<]*<\/system-out>/);
    expect(junit).toMatch(/name="stormlab cut · engine"[\s\S]*<system-out>1 expectation is for a variant not run here/);
  });

  it('a stopped run: where it stopped, and its expectations not judged, as notes and fields', async () => {
    const io = captureIo({ cwd: dir });
    let lines = 0;
    let stop: ((s: string) => void) | undefined;
    io.onStop = (fn) => {
      stop = fn;
      return () => {
        stop = undefined;
      };
    };
    const stderr = io.stderr;
    io.stderr = (t) => {
      stderr(t);
      if (++lines === 1) stop?.('SIGINT');
    };
    const code = await createProgram(io).run([
      'run',
      'retry-storm',
      '--no-ui',
      '--json',
      'out.json',
      '--markdown',
      'gate.md',
      '--expect',
      'amplification < 100',
    ]);
    expect(code).toBe(130);
    const json = JSON.parse(io.files.get('out.json')!);
    const [partial, inFlight, notRun, skipped] = json.notes;
    expect(partial).toMatchObject({ kind: 'partial', durationMs: 60_000 });
    expect(partial.stoppedAtMs).toBeGreaterThan(0);
    expect(partial.stoppedAtMs).toBeLessThan(60_000);
    expect(partial.message).toMatch(
      /^partial result: the run was stopped at \S+ of 1m, so its figures cover only what ran$/,
    );
    // Roots in flight at the stop are the stop's, not the drain's.
    expect(inFlight).toMatchObject({ kind: 'unfinished', variant: 'retry-storm', drainMs: null });
    expect(inFlight.message).toMatch(/were still in flight when the run was stopped/);
    // The scenario's two expectations are for compare's variants; the one given here was not judged.
    expect(notRun).toMatchObject({ kind: 'skipped-expectations', reason: 'not-run', count: 2 });
    expect(skipped).toEqual({
      kind: 'skipped-expectations',
      variants: ['retry-storm'],
      count: 1,
      reason: 'partial',
      message: '1 expectation was not judged: part of a run proves nothing either way',
    });
    expect(io.out.split('\n')[1]).toBe(`note: ${partial.message}`);
    expect(io.files.get('gate.md')).toContain(`- **Note:** ${partial.message}\n`);
  });

  it('the HTML report says them in its header, with what the command line overrode', async () => {
    const run = await stormlab(['compare', 'cut.yaml', '--no-ui', '--json', 'out.json', '--set', 'arrival.rate=4']);
    writeFileSync(join(dir, 'out.json'), run.files.get('out.json')!);
    const r = await cli(['report', 'out.json', '--html', 'report.html'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    const html = r.files.get('report.html')!;
    const header = html.slice(html.indexOf('<header>'), html.indexOf('</header>'));
    expect(header).toContain(`<li>${UNFINISHED('naive')}</li>`);
    expect(header).toMatch(/<summary>What ran: \d+ fields? overridden/);
    expect(header).toMatch(/\n--set +arrival\.rate = 4 \(as the scenario had it\)/);
  });

  it('report and diff read files with notes and effective scenarios, and files written before them', async () => {
    const run = await stormlab(['compare', 'cut.yaml', '--no-ui', '--json', 'out.json', '--set', 'arrival.rate=4']);
    const now = JSON.parse(run.files.get('out.json')!);
    expect(now.notes.length).toBeGreaterThan(0);
    expect(now.variants[0].effective.document).toBeDefined();
    const { notes, ...older } = now;
    for (const v of older.variants) delete v.effective;
    writeFileSync(join(dir, 'now.json'), run.files.get('out.json')!);
    writeFileSync(join(dir, 'older.json'), JSON.stringify(older));
    for (const [a, b] of [
      ['older.json', 'now.json'],
      ['now.json', 'older.json'],
    ]) {
      const diff = await cli(['diff', a, b], { cwd: dir });
      expect(diff.code, diff.err).toBe(0);
    }
    const report = await cli(['report', 'older.json'], { cwd: dir });
    expect(report.code, report.err).toBe(0);
    expect(report.out).not.toContain('note:');
    expect(report.out).not.toContain('overrides (');
  });
});
