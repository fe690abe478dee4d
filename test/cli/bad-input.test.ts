import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { SCENARIO_MAX_BYTES } from '../../src/scenario/read-bounded-file.js';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir, type CaptureOptions } from './capture-io.js';
import { BUNDLED_NAMES } from '../helpers/bundled-names.js';

/** A small valid scenario; each bad file breaks it in one (or several) places. */
const BASE = `name: bad
duration: 10s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 100, completion: 50 }
layers:
  - name: orchestrator
    retry: { policy: naive, attempts: 3 }
  - name: agent
    fanout: 3
  - name: llm
upstream:
  models:
    - { name: primary, slots: 8, queue: 16, ttft: 100ms, tpot: 10ms }
`;

function edit(from: string | RegExp, to: string, text = BASE): string {
  expect(text).toMatch(from);
  return text.replace(from, to);
}

const FILES: Record<string, () => string> = {
  'ok.yaml': () => BASE,
  'negative-fanout.yaml': () => edit('fanout: 3', 'fanout: -2'),
  'wrong-type.yaml': () => edit('slots: 8', 'slots: eight'),
  'unknown-key.yaml': () => edit('fanout: 3', 'fan_out: 3'),
  'unknown-top-key.yaml': () => `${BASE}upsteam: {}\n`,
  'enum.yaml': () => edit('policy: naive', 'policy: navie'),
  'arrival-type.yaml': () => edit('type: constant', 'type: constnt'),
  'duration.yaml': () => edit('duration: 10s', 'duration: 10 parsecs'),
  'model-ref.yaml': () => edit('  - name: llm\n', '  - name: llm\n    models: [primary, secondary]\n'),
  'missing.yaml': () => edit('duration: 10s\n', ''),
  'syntax.yaml': () => edit('    fanout: 3', '   fanout: 3'),
  'empty.yaml': () => '',
  'comments-only.yaml': () => '# a scenario, some day\n',
  'syntax.json': () => '{\n  "name": "bad",\n  "duration": "10s",\n}\n',
  'not-a-mapping.yaml': () => '- name: bad\n',
  'duplicate-layer.yaml': () => edit('name: agent', 'name: orchestrator'),
  'bad-variant.yaml': () => `${BASE}variants:\n  wide:\n    layers[9].fanout: 2\n  busy:\n    arrival.rate: -1\n`,
  'several.yaml': () =>
    edit(
      'duration: 10s',
      'duration: soon',
      edit('fanout: 3', 'fanout: -2', edit('slots: 8', 'slots: eight', edit('policy: naive', 'policy: navie'))),
    ),
  'notes.txt': () => BASE,
};

let dir: string;
beforeAll(() => {
  dir = tempDir(Object.fromEntries(Object.entries(FILES).map(([name, text]) => [name, text()])));
  mkdirSync(join(dir, 'sub'));
  for (const name of ['negative-fanout.yaml', 'syntax.yaml']) writeFileSync(join(dir, 'sub', name), FILES[name]());
});

/** Runs the CLI in the temp dir: a mistake is exit 2, exactly `lines` on stderr, nothing on stdout. */
async function expectUsage(argv: string[], lines: string[], options: CaptureOptions = {}): Promise<void> {
  const r = await cli(argv, { cwd: dir, ...options });
  expect(r.err).not.toMatch(/^\s+at /m);
  expect(r.err).not.toContain('internal error');
  expect(r.err.split('\n')).toEqual([...lines, '']);
  expect(r.out).toBe('');
  expect(r.code).toBe(2);
  expect(r.files.size).toBe(0);
}

describe('mistakes in a scenario file: exit 2, one line per problem naming the file and the path', () => {
  it('negative fan-out', () =>
    expectUsage(
      ['run', 'negative-fanout.yaml'],
      ['negative-fanout.yaml: layers[1].fanout: expected a positive integer, got -2'],
    ));

  it('wrong type', () =>
    expectUsage(
      ['run', 'wrong-type.yaml'],
      ['wrong-type.yaml: upstream.models[0].slots: expected a positive integer, got "eight"'],
    ));

  it('unknown key, with a did-you-mean', async () => {
    await expectUsage(
      ['run', 'unknown-key.yaml'],
      ['unknown-key.yaml: layers[1].fan_out: unknown key (did you mean fanout?)'],
    );
    await expectUsage(
      ['run', 'unknown-top-key.yaml'],
      ['unknown-top-key.yaml: upsteam: unknown key (did you mean upstream?)'],
    );
  });

  it('unknown enum value', async () => {
    await expectUsage(
      ['run', 'enum.yaml'],
      ['enum.yaml: layers[0].retry.policy: expected one of none, naive, sdk, engine, got "navie"'],
    );
    await expectUsage(
      ['run', 'arrival-type.yaml'],
      [
        'arrival-type.yaml: arrival.type: expected one of constant, poisson, ramp, burst, closed, got "constnt" (did you mean constant?)',
      ],
    );
  });

  it('bad duration', () =>
    expectUsage(
      ['run', 'duration.yaml'],
      ['duration.yaml: duration: expected a duration like 30s or 500ms, got "10 parsecs"'],
    ));

  it('unknown model reference', () =>
    expectUsage(
      ['run', 'model-ref.yaml'],
      ['model-ref.yaml: layers[2].models[1]: unknown model "secondary" (known: primary)'],
    ));

  it('missing required field', () =>
    expectUsage(['run', 'missing.yaml'], ['missing.yaml: duration: missing, expected a duration like 30s or 500ms']));

  it('YAML syntax error, at line:column', () =>
    expectUsage(['run', 'syntax.yaml'], ['syntax.yaml:9:1: YAML syntax error: Sequence item without - indicator']));

  it('JSON syntax error, at line:column', () =>
    expectUsage(['run', 'syntax.json'], ['syntax.json:4:1: JSON syntax error: Expected double-quoted property name']));

  it('empty file (or only comments)', async () => {
    const why = 'the file is empty (expected a scenario with name, duration, arrival, tokens, layers and upstream)';
    await expectUsage(['run', 'empty.yaml'], [`empty.yaml: ${why}`]);
    await expectUsage(['compare', 'comments-only.yaml'], [`comments-only.yaml: ${why}`]);
  });

  it('a document that is not a mapping', () =>
    expectUsage(
      ['run', 'not-a-mapping.yaml'],
      ['not-a-mapping.yaml: (top level): expected a mapping of scenario fields, got a list'],
    ));

  it('duplicate names', () =>
    expectUsage(
      ['run', 'duplicate-layer.yaml'],
      ['duplicate-layer.yaml: layers[1].name: duplicate layer name "orchestrator"'],
    ));

  it('broken variants: every one reported, under variants.<name>', async () => {
    const lines = [
      'bad-variant.yaml: variants.wide: layers[9].fanout: layers has 3 items, so [9] is past its end',
      'bad-variant.yaml: variants.busy: arrival.rate: expected a positive number, got -1',
    ];
    await expectUsage(['run', 'bad-variant.yaml'], lines);
    await expectUsage(['compare', 'bad-variant.yaml'], lines);
  });

  it('several problems in one file: all reported, one per line, no header', () =>
    expectUsage(
      ['run', 'several.yaml'],
      [
        'several.yaml: duration: expected a duration like 30s or 500ms, got "soon"',
        'several.yaml: layers[0].retry.policy: expected one of none, naive, sdk, engine, got "navie"',
        'several.yaml: layers[1].fanout: expected a positive integer, got -2',
        'several.yaml: upstream.models[0].slots: expected a positive integer, got "eight"',
      ],
    ));

  it('the file is named as the user wrote it, in a subdirectory too', async () => {
    await expectUsage(
      ['run', 'sub/negative-fanout.yaml'],
      ['sub/negative-fanout.yaml: layers[1].fanout: expected a positive integer, got -2'],
    );
    await expectUsage(
      ['run', './sub/../sub/syntax.yaml'],
      ['./sub/../sub/syntax.yaml:9:1: YAML syntax error: Sequence item without - indicator'],
    );
  });
});

describe('mistakes in naming the scenario', () => {
  it('missing file', () => expectUsage(['run', 'nope.yaml'], ['nope.yaml: file not found']));

  it('missing file in a directory', () => expectUsage(['compare', 'sub/nope.yml'], ['sub/nope.yml: file not found']));

  it('a bundled scenario named by its repository path, where no such file is (a package install)', () =>
    expectUsage(
      ['run', 'scenarios/retry-storm.yaml'],
      ['scenarios/retry-storm.yaml: file not found; the bundled scenario retry-storm is: stormlab run retry-storm'],
    ));

  it('unknown bundled name, with a did-you-mean and the list', () =>
    expectUsage(
      ['run', 'retry-strom'],
      [
        `retry-strom: no such file or bundled scenario; did you mean retry-storm? (bundled: ${BUNDLED_NAMES.join(', ')})`,
      ],
    ));

  it('a scenario too large to simulate: one line naming the field, before any run', async () => {
    await expectUsage(
      ['run', 'retry-storm', '--set', 'layers[1].fanout=1e7'],
      [
        'stormlab: --set "layers[1].fanout=1e7": layers[1].fanout: one root task would make about 10,000,000 logical calls (fan-out 1 × 10000000); at most 1,000,000',
      ],
    );
    await expectUsage(
      ['run', 'retry-storm', '--set', 'duration=1000h'],
      [
        'stormlab: --set "duration=1000h": duration: 1000h at 20 root tasks/s would make about 216,000,000 logical calls (3 per task); a run simulates at most 20,000,000: shorten it or lower the arrival rate',
      ],
    );
  });

  it('not a scenario file', () =>
    expectUsage(['run', 'notes.txt'], ['notes.txt: expected a .yaml, .yml or .json file, got ".txt"']));

  it('a directory', () => expectUsage(['run', '.'], ['.: is a directory, expected a scenario file']));
});

describe('mistakes in flags', () => {
  it('bad --set syntax', async () => {
    await expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[0].fanout'],
      ['stormlab: --set "layers[0].fanout": expected path=value'],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[x].fanout=1'],
      ['stormlab: --set "layers[x].fanout=1": bad index [x] in layers[x].fanout (expected [0], [1], ... or [*])'],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[0].retry={policy: naive'],
      ['stormlab: --set "layers[0].retry={policy: naive": the value is not valid YAML: Flow map must end with a }'],
    );
  });

  it('--set index out of range', () =>
    expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[5].fanout=2'],
      ['stormlab: --set "layers[5].fanout=2": layers has 3 items, so [5] is past its end'],
    ));

  it('--set to a bad value: the flag is blamed, and the field it reaches is named', () =>
    expectUsage(
      ['run', 'retry-storm', '--set', 'layers[1].fanout=-2'],
      ['stormlab: --set "layers[1].fanout=-2": layers[1].fanout: expected a positive integer, got -2'],
    ));

  it('--set of an unknown key: the flag is blamed, not the file', async () => {
    await expectUsage(
      ['run', 'retry-storm', '--set', 'engine.budget.ratio=0.1'],
      ['stormlab: --set "engine.budget.ratio=0.1": engine.budget: unknown key (did you mean retryBudget?)'],
    );
    await expectUsage(
      ['run', 'retry-storm', '--set', 'layers[*].retry.attemps=2'],
      [
        'stormlab: --set "layers[*].retry.attemps=2": layers[0].retry.attemps: unknown key (did you mean attempts?)',
        'stormlab: --set "layers[*].retry.attemps=2": layers[1].retry.attemps: unknown key (did you mean attempts?)',
        'stormlab: --set "layers[*].retry.attemps=2": layers[2].retry.attemps: unknown key (did you mean attempts?)',
      ],
    );
  });

  it('several bad --set flags: all reported', () =>
    expectUsage(
      ['run', 'ok.yaml', '--set', 'oops', '--set', 'layers[7].fanout=1'],
      [
        'stormlab: --set "oops": expected path=value',
        'stormlab: --set "layers[7].fanout=1": layers has 3 items, so [7] is past its end',
      ],
    ));

  it('bad --seed', async () => {
    const expected = (got: string) => [`stormlab: --seed: expected an integer from 0 to 4294967295, got ${got}`];
    await expectUsage(['run', 'ok.yaml', '--seed', 'abc'], expected('"abc"'));
    await expectUsage(['run', 'ok.yaml', '--seed', '-1'], expected('"-1"'));
    await expectUsage(['run', 'ok.yaml', '--seed', '1.5'], expected('"1.5"'));
    // Out of the scenario's range: still the flag's fault, not the file's.
    await expectUsage(['run', 'ok.yaml', '--seed', '4294967296'], expected('"4294967296"'));
  });

  it('bad --duration', async () => {
    await expectUsage(
      ['run', 'ok.yaml', '--duration', '10x'],
      ['stormlab: --duration: expected a duration like 30s or 2m, got "10x"'],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--duration', '0s'],
      ['stormlab: --duration: expected a duration above 0, like 30s or 2m, got "0s"'],
    );
    // A bare number is milliseconds in a scenario: on the command line it is surely a mistake.
    await expectUsage(
      ['run', 'ok.yaml', '--duration', '10'],
      ['stormlab: --duration: expected a duration with a unit, like 30s or 2m, got "10"'],
    );
  });

  it('unknown --variants name', () =>
    expectUsage(
      ['compare', 'ok.yaml', '--variants', 'naive,fast'],
      ['stormlab: --variants: unknown variant "fast" (known: naive, engine)'],
    ));

  it('empty --variants', () =>
    expectUsage(
      ['compare', 'ok.yaml', '--variants', ','],
      ['stormlab: --variants: expected a comma-separated list of variant names, got ","'],
    ));

  it('unknown --variant name on run, named as that flag', async () => {
    await expectUsage(
      ['run', 'ok.yaml', '--variant', 'turbo'],
      ['stormlab: --variant: unknown variant "turbo" (known: naive, engine)'],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--variant', 'naive,engine'],
      ['stormlab: --variant: expected one variant name (compare --variants a,b runs several), got "naive,engine"'],
    );
  });

  it('unknown CLI option, with a suggestion on the same line', async () => {
    await expectUsage(['run', 'ok.yaml', '--frobnicate'], ["stormlab: unknown option '--frobnicate'"]);
    await expectUsage(
      ['run', 'ok.yaml', '--sed', '2'],
      ["stormlab: unknown option '--sed' (did you mean one of --seed, --set?)"],
    );
    await expectUsage(
      ['compare', 'ok.yaml', '--variant', 'naive'],
      ["stormlab: unknown option '--variant' (did you mean --variants?)"],
    );
  });

  it('option without its value', () =>
    expectUsage(['run', 'ok.yaml', '--seed'], ["stormlab: option '--seed <n>' argument missing"]));

  it('unknown command', async () => {
    await expectUsage(['frobnicate'], ["stormlab: unknown command 'frobnicate'"]);
    await expectUsage(['rn', 'retry-storm'], ["stormlab: unknown command 'rn' (did you mean run?)"]);
  });

  it('missing argument', async () => {
    await expectUsage(['run'], ["stormlab: missing required argument 'scenario'"]);
    await expectUsage(['compare'], ["stormlab: missing required argument 'scenario'"]);
  });

  it('too many arguments', () =>
    expectUsage(
      ['run', 'ok.yaml', 'extra'],
      ["stormlab: too many arguments for 'run'. Expected 1 argument but got 2."],
    ));

  it('no command at all: help on stderr, exit 2', async () => {
    const r = await cli([], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^Usage: stormlab /);
  });
});

describe('output files', () => {
  it('an unwritable --json path is exit 2 with one line, after the summary', async () => {
    const r = await cli(['run', 'ok.yaml', '-q', '--json', 'no/such/dir/r.json'], { cwd: dir, writeError: 'ENOENT' });
    expect(r.err).toBe('stormlab: --json: cannot write no/such/dir/r.json: its directory does not exist\n');
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^amplification /);
  });
});

describe('hostile flags: keys that name a prototype, dotted names', () => {
  const PROTO = "(it names an object's prototype, never a scenario field)";
  it('--set __proto__ (with a path after it, alone, or deep in a path): one line blaming the flag, exit 2', async () => {
    await expectUsage(
      ['run', 'ok.yaml', '--set', '__proto__.polluted=1'],
      [`stormlab: --set "__proto__.polluted=1": bad path "__proto__.polluted": __proto__ cannot be a key ${PROTO}`],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--set', '__proto__=1'],
      [`stormlab: --set "__proto__=1": bad path "__proto__": __proto__ cannot be a key ${PROTO}`],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[0].__proto__={a: 1}'],
      [
        `stormlab: --set "layers[0].__proto__={a: 1}": bad path "layers[0].__proto__": __proto__ cannot be a key ${PROTO}`,
      ],
    );
    await expectUsage(
      ['run', 'ok.yaml', '--set', 'engine.constructor.prototype=1'],
      [
        `stormlab: --set "engine.constructor.prototype=1": bad path "engine.constructor.prototype": constructor cannot be a key ${PROTO}`,
      ],
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a value holding __proto__ or constructor: the flag is blamed', () =>
    expectUsage(
      ['run', 'ok.yaml', '--set', 'layers[0]={name: x, __proto__: {polluted: 1}}'],
      [
        'stormlab: --set "layers[0]={name: x, __proto__: {polluted: 1}}": the value has the key __proto__, which no scenario field has (it names an object\'s prototype)',
      ],
    ));

  it('--param and --params refuse them too, before any point runs', async () => {
    await expectUsage(
      ['sweep', 'ok.yaml', '--param', '__proto__.x=1,2'],
      [`stormlab: --param "__proto__.x=1,2": bad path "__proto__.x": __proto__ cannot be a key ${PROTO}`],
    );
    await expectUsage(
      ['tune', 'ok.yaml', '--maximize', 'goodput', '--params', 'constructor=1:2'],
      [`stormlab: --params: bad path "constructor": constructor cannot be a key ${PROTO}`],
    );
  });

  it('a dotted tool name unquoted: one line saying how to quote it', () =>
    expectUsage(
      ['run', 'side-effects', '--set', 'tools.gmail.send.slots=8'],
      [
        'stormlab: --set "tools.gmail.send.slots=8": tools has no key "gmail" but has "gmail.send": a name with dots is quoted, tools["gmail.send"]',
      ],
    ));

  it('quoted, it reaches the tool: in --set, --param and --params alike', async () => {
    const slots = async (argv: string[]) => {
      const r = await cli(['run', 'side-effects', '--duration', '5s', '-q', '--json', 'r.json', ...argv], { cwd: dir });
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.files.get('r.json')!).variants[0].effective.document.tools['gmail.send'].slots;
    };
    expect(await slots([])).toBe(64);
    expect(await slots(['--set', 'tools["gmail.send"].slots=8'])).toBe(8);
    expect(await slots(['--set', "tools.'gmail.send'.slots=9"])).toBe(9);
    const sweep = await cli(
      [
        'sweep',
        'side-effects',
        '--duration',
        '5s',
        '-q',
        '--workers',
        '1',
        '--param',
        'tools."gmail.send".slots=1,64',
        '--json',
        's.json',
      ],
      { cwd: dir },
    );
    expect(sweep.code, sweep.err).toBe(0);
    const file = JSON.parse(sweep.files.get('s.json')!);
    expect(file.params).toEqual([{ path: 'tools."gmail.send".slots', values: [1, 64] }]);
    // One slot for the email service: the points differ.
    expect(file.points[0].figures.goodput).not.toBe(file.points[1].figures.goodput);
  });
});

describe('hostile files: only regular files, of a bounded size', () => {
  let hostile: string;
  beforeAll(() => {
    hostile = tempDir({ 'ok.yaml': BASE });
    execFileSync('mkfifo', [join(hostile, 'fifo.yaml')]);
    execFileSync('mkfifo', [join(hostile, 'fifo.json')]);
    symlinkSync('/dev/zero', join(hostile, 'zero.yaml'));
    symlinkSync('/dev/zero', join(hostile, 'zero.json'));
    mkdirSync(join(hostile, 'dir.json'));
    // One byte over the cap, made sparse: no 16 MiB written.
    const big = join(hostile, 'big.yaml');
    writeFileSync(big, '');
    truncateSync(big, SCENARIO_MAX_BYTES + 1);
  });
  const usage = async (argv: string[], line: string) => {
    const r = await cli(argv, { cwd: hostile });
    expect(r.err).toBe(`${line}\n`);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
  };

  it('a scenario that is a fifo, a symlink to /dev/zero or too large: one line, exit 2, no hang', async () => {
    await usage(['run', 'fifo.yaml'], 'fifo.yaml: is a fifo (named pipe), not a regular file');
    await usage(['run', 'zero.yaml'], 'zero.yaml: is a character device, not a regular file');
    await usage(['run', 'big.yaml'], 'big.yaml: is larger than the 16 MiB stormlab reads (16,777,217 bytes)');
  });

  it('report and diff inputs: a fifo, /dev/zero or a directory is one line, exit 2, no hang', async () => {
    await usage(['report', 'fifo.json'], 'stormlab: cannot read fifo.json: is a fifo (named pipe), not a regular file');
    await usage(
      ['diff', 'zero.json', 'fifo.json'],
      'stormlab: cannot read zero.json: is a character device, not a regular file',
    );
    await usage(['diff', 'dir.json', 'fifo.json'], 'stormlab: cannot read dir.json: it is a directory');
  });

  it('proxy --faults: a fifo, /dev/zero, a directory or a file over 16 MiB is one line, exit 2, before listening', async () => {
    const proxy = (file: string) => ['proxy', '--upstream', 'http://127.0.0.1:9', '--port', '0', '--faults', file];
    await usage(
      proxy('fifo.json'),
      'stormlab: --faults: cannot read fifo.json: is a fifo (named pipe), not a regular file',
    );
    await usage(
      proxy('zero.json'),
      'stormlab: --faults: cannot read zero.json: is a character device, not a regular file',
    );
    await usage(proxy('dir.json'), 'stormlab: --faults: cannot read dir.json: it is a directory');
    await usage(proxy('none.json'), 'stormlab: --faults: cannot read none.json: no such file');
    await usage(
      proxy('big.yaml'),
      'stormlab: --faults: cannot read big.yaml: is larger than the 16 MiB stormlab reads (16,777,217 bytes)',
    );
  });

  it('serve and proxy --log: a fifo no process reads is one line, exit 2, before listening (not a hang)', async () => {
    await usage(
      ['serve', '--port', '0', '--log', 'fifo.json'],
      'stormlab: --log: cannot write fifo.json: it is a fifo no process reads',
    );
    await usage(
      ['proxy', '--upstream', 'http://127.0.0.1:9', '--port', '0', '--log', 'fifo.json'],
      'stormlab: --log: cannot write fifo.json: it is a fifo no process reads',
    );
  });

  it('calibrate traces: a fifo, /dev/zero or a directory is one line, exit 2, nothing written', async () => {
    const calibrate = (file: string) => ['calibrate', file, '-o', 'out.yaml'];
    await usage(calibrate('fifo.json'), 'stormlab: cannot read fifo.json: is a fifo (named pipe), not a regular file');
    await usage(calibrate('zero.json'), 'stormlab: cannot read zero.json: is a character device, not a regular file');
    await usage(calibrate('dir.json'), 'stormlab: cannot read dir.json: it is a directory');
    expect(existsSync(join(hostile, 'out.yaml'))).toBe(false);
  });
});

describe('--seeds counts in the cap on simulations', () => {
  it('sweep and tune refuse points × seeds over 10,000 in one line, before any point runs', async () => {
    await expectUsage(
      ['sweep', 'ok.yaml', '--param', 'arrival.rate=1,2', '--seeds', '1000000'],
      [
        'stormlab: --seeds: 2 points × 1,000,000 seeds = 2,000,000 simulations, more than a sweep or tune runs (10,000); give fewer seeds',
      ],
    );
    await expectUsage(
      ['tune', 'ok.yaml', '--maximize', 'goodput', '--params', 'engine.throttle.k', '--seeds', '100000'],
      [
        'stormlab: --seeds: 61 points (--budget and the current values) × 100,000 seeds = 6,100,000 simulations, more than a sweep or tune runs (10,000); give fewer seeds',
      ],
    );
  });
});
