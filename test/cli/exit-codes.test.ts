import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_EXITS, type CommandName } from '../../src/cli/command-exits.js';
import { EXIT, EXIT_MEANINGS, type ExitName } from '../../src/cli/io.js';
import { createProgram } from '../../src/cli/program.js';
import { captureIo, cli, tempDir } from './capture-io.js';

const commands = Object.keys(COMMAND_EXITS) as CommandName[];

/** The `Exit codes:` block of a --help: code → its line. */
function helpExits(help: string): Map<number, string> {
  const at = help.indexOf('Exit codes:\n');
  expect(at, 'no "Exit codes:" block').toBeGreaterThanOrEqual(0);
  const rows = new Map<number, string>();
  for (const line of help.slice(at + 'Exit codes:\n'.length).split('\n')) {
    const m = /^\s+(\d+) {2}(.+)$/.exec(line);
    if (m === null) break;
    rows.set(Number(m[1]), m[2]);
  }
  return rows;
}

describe('one exit-code table for every command', () => {
  it('every command stormlab --help lists has its codes, and its --help lists exactly them', async () => {
    const top = await cli(['--help']);
    const listed = [...top.out.slice(top.out.indexOf('Commands:')).matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]);
    expect(listed.filter((c) => c !== 'help').sort()).toEqual([...commands].sort());
    for (const command of commands) {
      const r = await cli([command, '--help']);
      expect(r.code, command).toBe(0);
      const rows = helpExits(r.out);
      expect([...rows.keys()], command).toEqual(COMMAND_EXITS[command].map((n) => EXIT[n]));
      // A meaning may be worded for the command, never left empty.
      for (const text of rows.values()) expect(text.trim().length, command).toBeGreaterThan(1);
    }
    // Ordinary wording where a command has none of its own.
    expect(helpExits((await cli(['sweep', '--help'])).out).get(143)).toBe(EXIT_MEANINGS.terminated);
  });

  it("README's table has every code with its meaning and the commands that can end with it", () => {
    const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Exit codes'));
    for (const name of Object.keys(EXIT) as ExitName[]) {
      const row = new RegExp(`^\\| ${EXIT[name]} +\\| (.+?) +\\| (.+?) +\\|$`, 'm').exec(section);
      expect(row, `README row for ${EXIT[name]}`).not.toBeNull();
      expect(row![1]).toBe(EXIT_MEANINGS[name]);
      const using = commands.filter((c) => (COMMAND_EXITS[c] as readonly string[]).includes(name));
      expect(row![2], `commands of ${EXIT[name]}`).toBe(
        using.length === commands.length ? 'every command' : using.map((c) => `\`${c}\``).join(', '),
      );
    }
    // 1 keeps one meaning; a partial result and a silent target have their own.
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
  });
});

/** `stormlab <argv>` whose process is sent `signal` once `after` points are done (their progress lines counted). */
async function stopAfterPoints(signal: string, argv: string[]) {
  const io = captureIo();
  let stop: ((signal: string) => void) | undefined;
  io.onStop = (fn) => {
    stop = fn;
    return () => void (stop = undefined);
  };
  const write = io.stderr;
  io.stderr = (t) => {
    write(t);
    if (/^\d+\/\d+ points/.test(t) || t.startsWith('round ')) stop?.(signal);
  };
  const code = await createProgram(io).run(argv);
  return { code, io };
}

describe('a stopped sweep or tune', () => {
  it('SIGINT during a sweep: exit 130, one line saying where it stopped, nothing written', async () => {
    const r = await stopAfterPoints('SIGINT', [
      'sweep',
      'retry-storm',
      '--duration',
      '5s',
      '--workers',
      '1',
      '--param',
      'engine.throttle.k=1.1,1.3,1.5,1.7,1.9,2.1,2.3,2.5,2.7,2.9,3.1,3.3',
      '--json',
      'out.json',
    ]);
    expect(r.code).toBe(130);
    const last = r.io.err.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(/^stormlab: sweep stopped by SIGINT after (\d+) of 12 points; nothing written$/);
    expect(Number(/after (\d+)/.exec(last)![1])).toBeLessThan(12);
    expect(r.io.files.size).toBe(0);
    expect(r.io.out).toBe('');
  });

  it('SIGTERM during a tune: exit 143, one line, nothing written', async () => {
    const r = await stopAfterPoints('SIGTERM', [
      'tune',
      'retry-storm',
      '--duration',
      '5s',
      '--workers',
      '1',
      '--seeds',
      '1',
      '--budget',
      '40',
      '--maximize',
      'goodput',
      '--params',
      'engine.throttle.k',
      '--json',
      'out.json',
    ]);
    expect(r.code).toBe(143);
    expect(r.io.err.trimEnd().split('\n').at(-1)).toMatch(
      /^stormlab: tune stopped by SIGTERM after \d+ points; nothing written$/,
    );
    expect(r.io.files.size).toBe(0);
    expect(r.io.out).toBe('');
  });
});

describe('a live --target that never answered', () => {
  it('exit 4, one line naming the target and what the requests got; no summary', async () => {
    const r = await cli([
      'run',
      'retry-storm',
      '--mode',
      'live',
      '--target',
      'http://127.0.0.1:1',
      '--no-ui',
      '--set',
      'duration=1s',
      '--set',
      'arrival.rate=20',
      '--set',
      'layers[*].retry={policy: none}',
      '--set',
      'upstream.faults=[]',
      '-q',
      '--json',
      'out.json',
    ]);
    expect(r.code).toBe(4);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^stormlab: --target http:\/\/127\.0\.0\.1:1 never answered: \d+ requests got no HTTP answer \(ECONNREFUSED ×\d+\); is it running, at that address\?\n$/,
    );
    expect(r.files.size).toBe(0);
  });
});

/** A result file a stopped run wrote (partial), and one of the same run that ran to its end. */
async function partialAndWhole(): Promise<{ dir: string }> {
  const io = captureIo();
  let stop: ((signal: string) => void) | undefined;
  io.onStop = (fn) => {
    stop = fn;
    return () => void (stop = undefined);
  };
  const write = io.stderr;
  io.stderr = (t) => {
    write(t);
    stop?.('SIGINT');
  };
  const argv = ['compare', 'retry-storm', '--no-ui', '--duration', '20s', '--json', 'out.json'];
  expect(await createProgram(io).run(argv)).toBe(130);
  const partial = io.files.get('out.json')!;
  expect(JSON.parse(partial).partial).toBe(true);
  const whole = await cli(['compare', 'retry-storm', '-q', '--duration', '20s', '--json', 'out.json']);
  return { dir: tempDir({ 'partial.json': partial, 'whole.json': whole.files.get('out.json')! }) };
}

describe('a partial result passes no gate unseen', () => {
  it('report --expect and diff refuse it (exit 3, one line); --allow-partial judges it, flagged in every output', async () => {
    const { dir } = await partialAndWhole();
    const opts = { cwd: dir };
    const gated = await cli(['report', 'partial.json', '--expect', 'variants.naive.amplification > 1'], opts);
    expect(gated.code).toBe(3);
    expect(gated.out).toBe('');
    expect(gated.err).toMatch(
      /^stormlab: partial\.json is a partial result \(stopped at .+ of 20s\): part of a run proves nothing either way; --allow-partial judges it anyway, flagged\n$/,
    );
    // Printing it is no gate: exit 0.
    expect((await cli(['report', 'partial.json'], opts)).code).toBe(0);

    for (const argv of [
      ['diff', 'whole.json', 'partial.json'],
      ['diff', 'partial.json', 'whole.json'],
    ]) {
      const r = await cli(argv, opts);
      expect(r.code, argv.join(' ')).toBe(3);
      expect(r.out).toBe('');
      expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.err).toMatch(/^stormlab: partial\.json is a partial result/);
    }

    const allowed = await cli(
      [
        'report',
        'partial.json',
        '--expect',
        'variants.naive.amplification > 1',
        '--allow-partial',
        '--junit',
        'j.xml',
        '--markdown',
        'm.md',
      ],
      opts,
    );
    expect(allowed.code).toBe(0);
    expect(allowed.err).toMatch(
      /^stormlab: warning: partial\.json is a partial result .*; judged anyway \(--allow-partial\)\n$/,
    );
    expect(allowed.files.get('j.xml')).toContain('stormlab retry-storm (partial result: partial.json)');
    expect(allowed.files.get('m.md')).toContain('stormlab retry-storm (partial result: partial.json)');

    const d = await cli(
      [
        'diff',
        'whole.json',
        'partial.json',
        '--allow-partial',
        '--json',
        'd.json',
        '--junit',
        'j.xml',
        '--markdown',
        'm.md',
      ],
      opts,
    );
    expect([0, 1]).toContain(d.code);
    expect(d.err).toMatch(/^stormlab: warning: partial\.json is a partial result/);
    expect(d.out.split('\n')[0]).toContain('(partial result: partial.json)');
    expect(JSON.parse(d.files.get('d.json')!)).toMatchObject({ base: { file: 'whole.json' }, new: { partial: true } });
    expect(JSON.parse(d.files.get('d.json')!).base.partial).toBeUndefined();
    expect(d.files.get('j.xml')).toContain('(partial result: partial.json)');
    expect(d.files.get('m.md')).toContain('(partial result: partial.json)');
  }, 60_000);
});
