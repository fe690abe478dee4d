import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { captureIo, cli } from './capture-io.js';

/** `stormlab <argv>` with a captured io whose process is sent `signal` after the first progress line. */
async function stoppedBy(signal: string, argv: string[]) {
  const io = captureIo();
  let stop: ((signal: string) => void) | undefined;
  let lines = 0;
  io.onStop = (fn) => {
    stop = fn;
    return () => {
      stop = undefined;
    };
  };
  const stderr = io.stderr;
  io.stderr = (t) => {
    stderr(t);
    if (++lines === 1) stop?.(signal);
  };
  const code = await createProgram(io).run(argv);
  return { code, io, json: JSON.parse(io.files.get('out.json') ?? 'null') };
}

describe('exits that tell the truth', () => {
  it('SIGINT during a run: exit 130, the partial result still written and marked partial, its checks not judged', async () => {
    const r = await stoppedBy('SIGINT', [
      'run',
      'retry-storm',
      '--no-ui',
      '--json',
      'out.json',
      '--expect',
      'amplification < 100',
    ]);
    expect(r.code).toBe(130);
    expect(r.json.partial).toBe(true);
    // The scenario's two expectations and the one given here: listed, none judged.
    expect(r.json.checks).toHaveLength(3);
    for (const c of r.json.checks)
      expect(c).toMatchObject({ status: 'skip', message: expect.stringMatching(/partial/) });
    expect(r.io.err).toMatch(/stopped at .* of 1m: the result below is partial/);
    // It stopped after the first tenth: fewer roots than the full run offers.
    const full = await cli(['run', 'retry-storm', '-q', '--json', 'out.json']);
    const whole = JSON.parse(full.files.get('out.json')!);
    expect(whole.partial).toBeUndefined();
    expect(r.json.variants[0].roots.offered).toBeLessThan(whole.variants[0].roots.offered);
  });

  it('SIGTERM during a compare: exit 143, the partial result written', async () => {
    const r = await stoppedBy('SIGTERM', ['compare', 'retry-storm', '--no-ui', '--json', 'out.json']);
    expect(r.code).toBe(143);
    expect(r.json.partial).toBe(true);
    expect(r.json.variants.map((v: { name: string }) => v.name)).toEqual(['naive', 'engine']);
  });

  it('a long quiet run (no progress lines) still stops on a signal, within its first part', async () => {
    const io = captureIo();
    io.onStop = (fn) => {
      setImmediate(() => fn('SIGTERM')); // as soon as the run gives the event loop a turn
      return () => {};
    };
    // Hours at 500 tasks/s: minutes of simulation, unless the signal is seen while it runs.
    const argv = [
      'run',
      'retry-storm',
      '-q',
      '--json',
      'out.json',
      '--set',
      'duration=4h',
      '--set',
      'arrival.rate=400',
    ];
    const code = await createProgram(io).run(argv);
    expect(io.err).toMatch(/^stopped at .* of 4h: the result below is partial\n/);
    expect(code).toBe(143);
    const json = JSON.parse(io.files.get('out.json') ?? 'null');
    expect(json.partial).toBe(true);
    expect(json.variants[0].roots.offered).toBeLessThan(400 * 3600);
  });

  it('a run to its end exits 0 and is not partial', async () => {
    const r = await stoppedBy('SIGINT', ['run', 'retry-storm', '-q', '--json', 'out.json']);
    // -q prints no progress line, so no signal comes.
    expect(r.code).toBe(0);
    expect(r.json.partial).toBeUndefined();
  });

  it('--json - writes the result JSON alone on stdout; the summary goes to stderr', async () => {
    const r = await cli(['run', 'retry-storm', '--json', '-']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).schema).toBe('stormlab.result/v1');
    expect(r.err).toMatch(/amplification 27\.0×/);
    expect(r.files.size).toBe(0);
  });

  it('an output path that cannot be written fails before the run: one line, exit 2, no summary', async () => {
    for (const flag of ['--json', '--junit', '--markdown']) {
      const r = await cli(['compare', 'retry-storm', flag, 'missing/out.file'], {
        unwritable: { 'missing/out.file': 'ENOENT' },
      });
      expect(r.code).toBe(2);
      expect(r.err).toBe(`stormlab: ${flag}: cannot write missing/out.file: its directory does not exist\n`);
      expect(r.out).toBe('');
    }
  });

  it('two outputs to stdout is a usage error', async () => {
    const r = await cli(['run', 'retry-storm', '--json', '-', '--junit', '-']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: --json and --junit: only one output can go to stdout (-)\n');
  });
});
