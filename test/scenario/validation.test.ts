import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { BASE, edit, errorOf, problemsOf, tempFile } from './helpers.js';

describe('validation: one exact line per mistake, with its path', () => {
  it('accepts the base scenario', () => {
    expect(loadScenario(BASE).name).toBe('t');
  });

  it('wrong type', () => {
    expect(problemsOf(edit('slots: 8', 'slots: many'))).toEqual([
      'upstream.models[0].slots: expected a positive integer, got "many"',
    ]);
    expect(problemsOf(edit('name: t', 'name: 42'))).toEqual(['name: expected a scenario name, got 42']);
    expect(
      problemsOf(
        edit(
          'layers:\n  - { name: agent, fanout: 2, retry: { policy: naive } }\n  - { name: llm, retry: { policy: sdk } }',
          'layers: lots',
        ),
      ),
    ).toEqual(['layers: expected a list of layers, got "lots"']);
  });

  it('negative and non-integer numbers', () => {
    expect(problemsOf(edit('fanout: 2', 'fanout: -2'))).toEqual([
      'layers[0].fanout: expected a positive integer, got -2',
    ]);
    expect(problemsOf(edit('queue: 16', 'queue: 1.5'))).toEqual([
      'upstream.models[0].queue: expected an integer >= 0, got 1.5',
    ]);
    expect(problemsOf(edit('rate: 5', 'rate: 0'))).toEqual(['arrival.rate: expected a positive number, got 0']);
  });

  it('unknown keys, with the closest known key when there is one', () => {
    expect(problemsOf(edit('fanout: 2', 'fan_out: 2'))).toEqual([
      'layers[0].fan_out: unknown key (did you mean fanout?)',
    ]);
    expect(problemsOf(edit('policy: naive', 'policy: naive, attemps: 2'))).toEqual([
      'layers[0].retry.attemps: unknown key (did you mean attempts?)',
    ]);
    expect(problemsOf(edit('name: t', 'name: t\ncolour: red'))).toEqual(['colour: unknown key']);
    expect(problemsOf(edit('rate: 5', 'rate: 5, burst_rate: 9'))).toEqual(['arrival.burst_rate: unknown key']);
  });

  it('unknown enum values, with a suggestion when one is close', () => {
    expect(problemsOf(edit('type: constant', 'type: uniform'))).toEqual([
      'arrival.type: expected one of constant, poisson, ramp, burst, closed, got "uniform"',
    ]);
    expect(problemsOf(edit('policy: sdk', 'policy: engin'))).toEqual([
      'layers[1].retry.policy: expected one of none, naive, sdk, engine, got "engin" (did you mean engine?)',
    ]);
    expect(problemsOf(edit('prompt: 100', 'prompt: { dist: gauss, mean: 1 }'))).toEqual([
      'tokens.prompt.dist: expected one of const, uniform, exponential, lognormal, choice, poisson, got "gauss"',
    ]);
    expect(problemsOf(edit('arrival: { type: constant, rate: 5 }', 'arrival: { rate: 5 }'))).toEqual([
      'arrival.type: missing, expected one of constant, poisson, ramp, burst, closed',
    ]);
    // Durations in messages read as the file writes them, not in ms.
    const burst = 'arrival: { type: burst, rate: 5, burstRate: 50, every: 20s, length: 40s }';
    expect(problemsOf(edit('arrival: { type: constant, rate: 5 }', burst))).toEqual([
      'arrival.length: expected at most every (20s), got 40s',
    ]);
  });

  it('bad durations', () => {
    expect(problemsOf(edit('duration: 10s', 'duration: soon'))).toEqual([
      'duration: expected a duration like 30s or 500ms, got "soon"',
    ]);
    expect(problemsOf(edit('duration: 10s', 'duration: 0s'))).toEqual([
      'duration: expected a duration above 0, got "0s"',
    ]);
    expect(problemsOf(edit('ttft: 200ms', 'ttft: -5'))).toEqual([
      'upstream.models[0].ttft: expected a duration like 30s or 500ms, got -5',
    ]);
    expect(problemsOf(edit('ttft: 200ms', 'ttft: { dist: lognormal, median: fast, p99: 2s }'))).toEqual([
      'upstream.models[0].ttft.median: expected a duration like 30s or 500ms, got "fast"',
    ]);
  });

  it('unknown model references, in layers and in faults', () => {
    expect(problemsOf(edit('policy: sdk } }', 'policy: sdk }, models: [gpt-5] }'))).toEqual([
      'layers[1].models[0]: unknown model "gpt-5" (known: primary)',
    ]);
    const faulty = `${BASE}  faults:\n    - { kind: outage, model: secondary }\n`;
    expect(problemsOf(faulty)).toEqual(['upstream.faults[0].model: unknown model "secondary" (known: primary)']);
  });

  it('models only on the last layer, names unique', () => {
    expect(problemsOf(edit('fanout: 2,', 'fanout: 2, models: [primary],'))).toEqual([
      'layers[0].models: only the last layer calls models (this is layer 1 of 2)',
    ]);
    expect(problemsOf(edit('name: llm', 'name: agent'))).toEqual(['layers[1].name: duplicate layer name "agent"']);
  });

  it('missing required fields', () => {
    expect(problemsOf(edit('slots: 8, ', ''))).toEqual([
      'upstream.models[0].slots: missing, expected a positive integer',
    ]);
    expect(problemsOf(edit('name: t\n', ''))).toEqual(['name: missing, expected a scenario name']);
    expect(problemsOf('name: x\n')).toEqual([
      'duration: missing, expected a duration like 30s or 500ms',
      'arrival: missing, expected an arrival like {type: constant, rate: 20}',
      'tokens: missing, expected a mapping of prompt and completion token counts',
      'layers: missing, expected a list of layers',
      'upstream: missing, expected a mapping with models (and faults)',
    ]);
    expect(problemsOf(edit('- { name: primary, slots: 8, queue: 16, ttft: 200ms, tpot: 10ms }', '[]'))).toEqual([
      'upstream.models: expected at least one model',
    ]);
  });

  it('distributions: fan-out values must be positive integers, ranges ordered, weights matched', () => {
    expect(problemsOf(edit('fanout: 2', 'fanout: { dist: choice, values: [1, 2.5] }'))).toEqual([
      'layers[0].fanout.values[1]: expected a positive integer, got 2.5',
    ]);
    expect(problemsOf(edit('fanout: 2', 'fanout: { dist: uniform, min: 3, max: 1 }'))).toEqual([
      'layers[0].fanout.max: expected at least min (3), got 1',
    ]);
    expect(problemsOf(edit('prompt: 100', 'prompt: { dist: choice, values: [200, 64000], weights: [1] }'))).toEqual([
      'tokens.prompt.weights: expected 2 weights (one per value), got 1',
    ]);
    expect(problemsOf(edit('ttft: 200ms', 'ttft: { dist: lognormal, median: 2s, p99: 1s }'))).toEqual([
      'upstream.models[0].ttft.p99: expected at least median (2s), got 1s',
    ]);
  });

  it('engine options: ranges and on/off switches', () => {
    const engine = (block: string) => edit('upstream:', `engine: ${block}\nupstream:`);
    expect(problemsOf(engine('{ breaker: 3 }'))).toEqual([
      'engine.breaker: expected a mapping of breaker options, true or false, got 3',
    ]);
    expect(problemsOf(engine('{ throttle: { k: 0.5 } }'))).toEqual([
      'engine.throttle.k: expected a number >= 1 and <= 1000, got 0.5',
    ]);
    expect(problemsOf(engine('{ breaker: { failureRatio: 2 } }'))).toEqual([
      'engine.breaker.failureRatio: expected a number > 0 and <= 1, or false, got 2',
    ]);
    expect(problemsOf(engine('{ limits: [ { name: tpm, unit: token, rate: 1000, per: minute } ] }'))).toEqual([
      'engine.limits[0].unit: expected one of requests, tokens, got "token" (did you mean tokens?)',
    ]);
  });

  it('replicas and engine state', () => {
    const engine = (block: string) => edit('upstream:', `engine: ${block}\nupstream:`);
    expect(problemsOf(edit('fanout: 2', 'fanout: 2, replicas: 0'))).toEqual([
      'layers[0].replicas: expected an integer from 1 to 1000, got 0',
    ]);
    expect(problemsOf(edit('fanout: 2', 'fanout: 2, replicas: 2.5'))).toEqual([
      'layers[0].replicas: expected an integer from 1 to 1000, got 2.5',
    ]);
    expect(problemsOf(edit('fanout: 2', 'fanout: 2, replicas: "4"'))).toEqual([
      'layers[0].replicas: expected an integer from 1 to 1000, got "4"',
    ]);
    expect(problemsOf(edit('fanout: 2', 'fanout: 2, replica: 4'))).toEqual([
      'layers[0].replica: unknown key (did you mean replicas?)',
    ]);
    expect(problemsOf(engine('{ state: sharde }'))).toEqual([
      'engine.state: expected one of local, shared, got "sharde" (did you mean shared?)',
    ]);
    expect(problemsOf(edit('policy: sdk', 'policy: engine, engine: { state: global }'))).toEqual([
      'layers[1].retry.engine.state: expected one of local, shared, got "global" (did you mean local?)',
    ]);
    expect(problemsOf(BASE, ['engine.state=redis'])).toEqual([
      '--set "engine.state=redis": engine.state: expected one of local, shared, got "redis"',
    ]);
  });

  it('replicas default to 1 (and are left out), engine state to local; both take --set', () => {
    const s = loadScenario(BASE);
    expect(s.traffic.layers.map((l) => l.replicas)).toEqual([undefined, undefined]);
    expect(s.traffic.engine.state).toBe('local');
    const set = loadScenario(BASE, {
      set: [
        'layers[*].replicas=4',
        'engine.state=shared',
        'layers[1].retry.policy=engine',
        'layers[1].retry.engine.state=local',
      ],
    });
    expect(set.traffic.layers.map((l) => l.replicas)).toEqual([4, 4]);
    expect(set.traffic.engine.state).toBe('shared');
    expect(set.traffic.layers[1].retry).toEqual({ policy: 'engine', engine: { state: 'local' } });
    expect(loadScenario(BASE, { set: ['layers[0].replicas=1'] }).traffic.layers[0]).not.toHaveProperty('replicas');
  });

  it('faults: kinds, windows and status weights', () => {
    const fault = (f: string) => `${BASE}  faults:\n    - ${f}\n`;
    expect(problemsOf(fault('{ kind: flood }'))).toEqual([
      'upstream.faults[0].kind: expected one of errors, outage, latency, reset, hang, midstream, quota, slow-first-token, stall, cut, malformed, missing-done, prefill-rejected, content-filter, context-length, got "flood"',
    ]);
    expect(problemsOf(fault('{ kind: outage, from: 20s, to: 10s }'))).toEqual([
      'upstream.faults[0].to: expected a time after from (20s), got 10s',
    ]);
    expect(problemsOf(fault('{ kind: errors, status: { abc: 1 } }'))).toEqual([
      'upstream.faults[0].status.abc: expected an HTTP error status from 400 to 599 as the key, got "abc"',
    ]);
    // A fault answers with an error: a success status would be an empty answer counted as one.
    expect(problemsOf(fault('{ kind: errors, status: 200 }'))).toEqual([
      'upstream.faults[0].status: expected an HTTP error status from 400 to 599, got 200',
    ]);
    expect(problemsOf(fault('{ kind: outage, status: { 503: 1, 302: 1 } }'))).toEqual([
      'upstream.faults[0].status.302: expected an HTTP error status from 400 to 599 as the key, got "302"',
    ]);
    expect(problemsOf(fault('{ kind: latency }'))).toEqual([
      'upstream.faults[0].factor: expected factor or add (or both)',
    ]);
    expect(problemsOf(fault('{ kind: outage, rate: 0.5 }'))).toEqual(['upstream.faults[0].rate: unknown key']);
  });

  it('stream faults: each kind names the field at fault', () => {
    const fault = (f: string) => `${BASE}  faults:\n    - ${f}\n`;
    expect(problemsOf(fault('{ kind: slow-first-token }'))).toEqual([
      'upstream.faults[0].ttft: expected ttft or add (or both)',
    ]);
    expect(problemsOf(fault('{ kind: stall, after: 0 }'))).toEqual([
      'upstream.faults[0].after: expected a positive integer, got 0',
    ]);
    expect(problemsOf(fault('{ kind: stall, after: 3, for: always }'))).toEqual([
      'upstream.faults[0].for: expected a duration like 30s, or forever, got "always"',
    ]);
    expect(problemsOf(fault('{ kind: cut }'))).toEqual([
      'upstream.faults[0].after: missing, expected a positive integer',
    ]);
    expect(problemsOf(fault('{ kind: content-filter, mode: block }'))).toEqual([
      'upstream.faults[0].mode: expected one of finish, reject, got "block"',
    ]);
    expect(problemsOf(fault('{ kind: context-length, contextTokens: 0 }'))).toEqual([
      'upstream.faults[0].contextTokens: expected a positive integer, got 0',
    ]);
    expect(problemsOf(fault('{ kind: malformed, after: 3 }'))).toEqual(['upstream.faults[0].after: unknown key']);
    const ok = loadScenario(
      `${BASE}  faults:\n    - { kind: stall, after: 3, for: forever }\n    - { kind: stall, after: 2, for: 5s }\n`,
    );
    expect(ok.upstream.faults.map((f) => [f.afterTokens, f.stallMs])).toEqual([
      [3, undefined],
      [2, 5000],
    ]);
  });

  it('reports several problems at once, all of them', () => {
    const text = edit(
      'fanout: 2',
      'fanout: -2',
      edit(
        'slots: 8',
        'slots: many',
        edit('duration: 10s', 'duration: soon', edit('policy: sdk } }', 'policy: sdk }, models: [gpt-5] }')),
      ),
    );
    const e = errorOf(text);
    expect(e.problems).toEqual([
      'duration: expected a duration like 30s or 500ms, got "soon"',
      'layers[0].fanout: expected a positive integer, got -2',
      'upstream.models[0].slots: expected a positive integer, got "many"',
      'layers[1].models[0]: unknown model "gpt-5" (known: primary)',
    ]);
    expect(e.message).toBe(`<inline>: 4 problems\n  ${e.problems.join('\n  ')}`);
    expect(e.code).toBe('ERR_STORMLAB_SCENARIO');
  });

  it('a top level that is not a mapping', () => {
    expect(problemsOf('- 1\n- 2\n')).toEqual(['(top level): expected a mapping of scenario fields, got a list']);
  });

  it('never shows zod wording', () => {
    const text = edit(
      'tokens: { prompt: 100, completion: 50 }',
      'tokens: [1]',
      edit('arrival: { type: constant, rate: 5 }', 'arrival: 7'),
    );
    for (const p of problemsOf(text)) expect(p).not.toMatch(/Invalid|Expected|received|Unrecognized/);
  });
});

describe('files', () => {
  it('YAML syntax errors, with line:column', () => {
    const e = errorOf(tempFile('bad.yaml', 'name: x\nlayers:\n  - name: a\n    fanout: [1\n'));
    expect(e.problems).toEqual([
      '5:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    expect(e.message.startsWith(`${e.source}: 1 problem\n  5:1: `)).toBe(true);
    expect(problemsOf('a: 1\na: 2\n')).toEqual(['2:1: YAML syntax error: Map keys must be unique']);
  });

  it('hints at quoting [*] keys inside { }', () => {
    expect(problemsOf('name: x\nvariants: { layers[*].retry: {policy: naive} }\n')[0]).toMatch(
      /^2:\d+: YAML syntax error: .*quote keys that hold \[\*\], like "layers\[\*\]\.retry"\)$/,
    );
  });

  it('an empty file, or one with only comments', () => {
    const empty = 'the file is empty (expected a scenario with name, duration, arrival, tokens, layers and upstream)';
    expect(problemsOf(tempFile('empty.yaml', ''))).toEqual([empty]);
    expect(problemsOf(tempFile('comments.yml', '# nothing yet\n'))).toEqual([empty]);
    expect(problemsOf(tempFile('empty.json', '  \n'))).toEqual([empty]);
  });

  it('a missing file, a directory, an unknown extension', () => {
    const e = errorOf('/nonexistent/dir/scenario.yaml');
    expect(e.message).toBe('/nonexistent/dir/scenario.yaml: 1 problem\n  file not found');
    expect(problemsOf(tempFile('x.txt', BASE))).toEqual(['expected a .yaml, .yml or .json file, got ".txt"']);
    const dir = tempFile('x.yaml', BASE).replace(/x\.yaml$/, '');
    expect(problemsOf(dir)).toEqual(['is a directory, expected a scenario file']);
  });

  it('JSON by extension, with line:column of syntax errors', () => {
    const json = JSON.stringify(loadScenario(BASE).document, null, 2);
    expect(loadScenario(tempFile('ok.json', json)).name).toBe('t');
    expect(problemsOf(tempFile('bad.json', '{\n  "name": "x",\n}'))[0]).toMatch(/^3:1: JSON syntax error: /);
    // YAML-only syntax in a .json file is a JSON error, not silently read as YAML.
    expect(problemsOf(tempFile('yaml-in.json', 'name: x\n'))).toEqual(["1:2: JSON syntax error: Unexpected token 'a'"]);
    expect(problemsOf(tempFile('tru.json', '{\n  "a": tru}'))).toEqual([
      "2:11: JSON syntax error: Unexpected token '}'",
    ]);
    expect(problemsOf(tempFile('cut.json', '{\n  "a": [1,'))).toEqual([
      '2:11: JSON syntax error: Unexpected end of JSON input',
    ]);
  });

  it('YAML by extension (.yaml and .yml)', () => {
    expect(loadScenario(tempFile('a.yaml', BASE)).source).toMatch(/a\.yaml$/);
    expect(loadScenario(tempFile('a.yml', BASE)).durationMs).toBe(10_000);
  });

  it('names the source in the message', () => {
    expect(() => loadScenario('name: x\n', { source: 'stdin' })).toThrow(/^stdin: 5 problems\n/);
    expect(() => loadScenario('name: x\n')).toThrow(ScenarioError);
  });
});

describe('engine settings that do not fit together', () => {
  it("are refused before the run, with the engine's own reason and the path of the engine that has them", () => {
    expect(problemsOf(`${BASE}engine: { breaker: { openMs: 70s, maxOpenMs: 60s } }\n`)).toEqual([
      'engine: breaker.maxOpenMs must be a duration >= 70s, got 1m',
    ]);
    // maxOpenMs left out follows openMs (twice it): no clash.
    expect(() => loadScenario(`${BASE}engine: { breaker: { openMs: 70s } }\n`)).not.toThrow();
    const layer = BASE.replace(
      'retry: { policy: sdk }',
      'retry: { policy: engine, engine: { backoff: { baseMs: 5s, capMs: 1s } } }',
    );
    expect(layer).not.toBe(BASE);
    expect(problemsOf(layer)).toEqual(['layers[1].retry.engine: backoff.capMs must be a duration >= 5s, got 1s']);
  });

  it('are blamed on the --set that made them', () => {
    expect(problemsOf(BASE, ['engine.breaker.maxOpenMs=60s', 'engine.breaker.openMs=70s'])).toEqual([
      '--set "engine.breaker.openMs=70s": engine: breaker.maxOpenMs must be a duration >= 70s, got 1m',
    ]);
  });
});

describe('validation: a model’s answerTokens', () => {
  it('takes max, a number of tokens or a distribution, and refuses anything else with its path', () => {
    const with_ = (v: string) => edit('slots: 8', `slots: 8, answerTokens: ${v}`);
    expect(loadScenario(with_('max')).upstream.models[0].answerTokens).toBe('max');
    expect(loadScenario(with_('120')).upstream.models[0].answerTokens).toBe(120);
    expect(loadScenario(with_('{ dist: lognormal, median: 200, p99: 900 }')).upstream.models[0].answerTokens).toEqual({
      dist: 'lognormal',
      median: 200,
      p99: 900,
    });
    expect(loadScenario(BASE).upstream.models[0].answerTokens).toBeUndefined();
    expect(problemsOf(with_('lots'))).toEqual([
      'upstream.models[0].answerTokens: expected max, a number of tokens or a {dist: ...} mapping, got "lots"',
    ]);
  });
});
