import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import {
  applyOverrides,
  formatSegments,
  isForbiddenKey,
  parsePath,
  parseSetFlags,
  parseSetText,
  splitOutsideQuotes,
} from '../../src/scenario/set-override.js';
import { BASE, problemsOf } from './helpers.js';

describe('parsePath and parseSetText', () => {
  it('splits keys, indexes and [*]', () => {
    expect(parsePath('upstream.faults[0].rate')).toEqual({
      ok: true,
      segments: [{ key: 'upstream' }, { key: 'faults' }, { index: 0 }, { key: 'rate' }],
    });
    expect(parsePath('layers[*].retry.policy')).toEqual({
      ok: true,
      segments: [{ key: 'layers' }, { all: true }, { key: 'retry' }, { key: 'policy' }],
    });
    expect(parsePath('upstream.faults[0].status.429')).toMatchObject({
      ok: true,
      segments: [{ key: 'upstream' }, { key: 'faults' }, { index: 0 }, { key: 'status' }, { key: '429' }],
    });
  });

  it('refuses malformed paths', () => {
    expect(parsePath('')).toEqual({ ok: false, message: 'expected path=value, the path is empty' });
    expect(parsePath('layers[x].fanout')).toEqual({
      ok: false,
      message: 'bad index [x] in layers[x].fanout (expected [0], [1], ... or [*])',
    });
    expect(parsePath('layers[-1]')).toMatchObject({
      ok: false,
      message: 'bad index [-1] in layers[-1] (expected [0], [1], ... or [*])',
    });
    expect(parsePath('a..b')).toEqual({ ok: false, message: 'bad path "a..b": expected a key or [index] at "..b"' });
    expect(parsePath('layers[0')).toMatchObject({ ok: false });
    expect(parsePath('[0].a')).toMatchObject({ ok: false });
  });

  it('reads values as YAML scalars and flow collections', () => {
    const value = (flag: string) => {
      const r = parseSetText(flag);
      if (!r.ok) throw new Error(r.message);
      return r.override.value;
    };
    expect(value('a=0.5')).toBe(0.5);
    expect(value('a=true')).toBe(true);
    expect(value('a=engine')).toBe('engine');
    expect(value('a=30s')).toBe('30s');
    expect(value('a={policy: naive, attempts: 2}')).toEqual({ policy: 'naive', attempts: 2 });
    expect(value('a=[0.8, 0.2]')).toEqual([0.8, 0.2]);
    expect(value('a=x=y')).toBe('x=y');
    expect(value('a=')).toBeNull();
    expect(parseSetText('a={b: 1')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^the value is not valid YAML: /),
    });
  });

  it('names the flag in each problem', () => {
    expect(parseSetFlags(['foo', '=1', 'a.b=2', 'layers[x].a=1']).problems).toEqual([
      '--set "foo": expected path=value',
      '--set "=1": expected path=value, the path is empty',
      '--set "layers[x].a=1": bad index [x] in layers[x].a (expected [0], [1], ... or [*])',
    ]);
  });
});

describe('applyOverrides', () => {
  const doc = {
    arrival: { rate: 5 },
    layers: [{ name: 'a', retry: { policy: 'naive' } }, { name: 'b' }],
    upstream: { faults: [{ kind: 'outage' }] },
  };

  it('sets values without touching the input', () => {
    const before = structuredClone(doc);
    const r = applyOverrides(doc, [
      { path: 'arrival.rate', value: 9 },
      { path: 'layers[*].retry.policy', value: 'engine' },
    ]);
    expect(r.problems).toEqual([]);
    expect(r.doc).toMatchObject({
      arrival: { rate: 9 },
      layers: [{ retry: { policy: 'engine' } }, { retry: { policy: 'engine' } }],
    });
    expect(doc).toEqual(before);
  });

  it('creates missing mappings on the way', () => {
    expect(applyOverrides(doc, [{ path: 'engine.throttle.k', value: 3 }]).doc).toMatchObject({
      engine: { throttle: { k: 3 } },
    });
  });

  it('removes a key or a list element for null', () => {
    const r = applyOverrides(doc, [
      { path: 'arrival.rate', value: null },
      { path: 'upstream.faults[0]', value: null },
    ]);
    expect(r.doc).toMatchObject({ arrival: {}, upstream: { faults: [] } });
  });

  it('gives each wildcard match its own copy', () => {
    const r = applyOverrides(doc, [{ path: 'layers[*].retry', value: { policy: 'engine' } }]).doc as typeof doc;
    expect(r.layers[0].retry).not.toBe(r.layers[1].retry);
  });

  it('refuses indexes past the end and steps into scalars or missing lists', () => {
    const label = (path: string) => ({ path, value: 1, origin: `--set "${path}=1"` });
    expect(
      applyOverrides(doc, [
        label('upstream.faults[3].rate'),
        label('arrival.rate.x'),
        label('arrival[0]'),
        label('models[0].name'),
        label('layers[2]'),
      ]).problems,
    ).toEqual([
      '--set "upstream.faults[3].rate=1": upstream.faults has 1 item, so [3] is past its end',
      '--set "arrival.rate.x=1": arrival.rate is a number, not a mapping',
      '--set "arrival[0]=1": arrival is a mapping, not a list',
      '--set "models[0].name=1": models is missing, not a list',
      '--set "layers[2]=1": layers has 2 items, so [2] is past its end',
    ]);
  });

  it('applies in order: the last override of a path wins', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 8 }), (rates) => {
        const r = applyOverrides(
          doc,
          rates.map((value) => ({ path: 'arrival.rate', value })),
        );
        return (r.doc as typeof doc).arrival.rate === rates[rates.length - 1];
      }),
    );
  });
});

describe('--set through loadScenario', () => {
  it('applies before validation, so validation covers the values', () => {
    expect(
      loadScenario(BASE, { set: ['arrival.rate=7', 'layers[*].retry.policy=engine', 'duration=1m'] }),
    ).toMatchObject({
      durationMs: 60_000,
      traffic: { arrival: { rate: 7 }, layers: [{ retry: { policy: 'engine' } }, { retry: { policy: 'engine' } }] },
    });
    expect(problemsOf(BASE, ['arrival.rate=fast'])).toEqual([
      '--set "arrival.rate=fast": arrival.rate: expected a positive number, got "fast"',
    ]);
    expect(problemsOf(BASE, ['layers[0].retry={policy: naive, attempts: 0}'])).toEqual([
      '--set "layers[0].retry={policy: naive, attempts: 0}": layers[0].retry.attempts: expected an integer from 1 to 100, got 0',
    ]);
  });

  it('reports bad flags along with the other problems', () => {
    expect(problemsOf(BASE, ['foo', 'upstream.models[3].slots=2', 'upstream.models[0].slots=many'])).toEqual([
      '--set "foo": expected path=value',
      '--set "upstream.models[3].slots=2": upstream.models has 1 item, so [3] is past its end',
      '--set "upstream.models[0].slots=many": upstream.models[0].slots: expected a positive integer, got "many"',
    ]);
  });

  it("blames a problem on the flag that wrote there, and leaves the file's own problems to the file", () => {
    const broken = BASE.replace('duration: 10s', 'duration: soon');
    expect(broken).not.toBe(BASE);
    expect(problemsOf(broken, ['arrival.rate=0'])).toEqual([
      'duration: expected a duration like 30s or 500ms, got "soon"',
      '--set "arrival.rate=0": arrival.rate: expected a positive number, got 0',
    ]);
  });

  it('null brings a default back', () => {
    const s = loadScenario(BASE, { set: ['seed=7', 'seed=null', 'layers[1].retry='] });
    expect(s.seed).toBe(1);
    expect(s.traffic.layers[1].retry).toEqual({ policy: 'none' });
  });
});

describe('quoted keys: names with dots (a tool named gmail.send)', () => {
  const tool = [{ key: 'tools' }, { key: 'gmail.send' }, { key: 'latency' }];
  it('reads ["…"], [\'…\'] and ."…" as one key, and writes a key back quoted only when it must be', () => {
    for (const p of ['tools["gmail.send"].latency', "tools['gmail.send'].latency", 'tools."gmail.send".latency'])
      expect(parsePath(p), p).toEqual({ ok: true, segments: tool });
    expect(formatSegments(tool)).toBe('tools["gmail.send"].latency');
    expect(parsePath('a["x\\"]y"]')).toEqual({ ok: true, segments: [{ key: 'a' }, { key: 'x"]y' }] });
    expect(formatSegments([{ key: 'layers' }, { index: 2 }, { key: 'retry' }])).toBe('layers[2].retry');
  });

  it('refuses a quoted key left open, empty, or followed by no . or [', () => {
    expect(parsePath('a["x')).toMatchObject({ ok: false, message: expect.stringContaining('has no closing "') });
    expect(parsePath('a[""]')).toMatchObject({ ok: false, message: expect.stringContaining('empty') });
    expect(parsePath('a["x"]b')).toMatchObject({ ok: false, message: expect.stringContaining('expected . or [') });
    expect(parsePath('a["\\q"]')).toMatchObject({ ok: false, message: expect.stringContaining('bad escape') });
  });

  it('splits path=value at the first = outside quotes, and a list at commas outside them', () => {
    expect(parseSetText('tools["a=b"].slots=4')).toEqual({
      ok: true,
      override: { path: 'tools["a=b"].slots', value: 4 },
    });
    expect(splitOutsideQuotes('a.k,tools["x,y"].slots=1:4,b', ',')).toEqual(['a.k', 'tools["x,y"].slots=1:4', 'b']);
  });

  it('any key written back by formatSegments parses to the same segments (fuzzed)', () => {
    const segment = fc.oneof(
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => !isForbiddenKey(k))
        .map((key) => ({ key })),
      fc.nat({ max: 50 }).map((index) => ({ index })),
      fc.constant({ all: true as const }),
    );
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !isForbiddenKey(k)),
        fc.array(segment, { maxLength: 5 }),
        (first, rest) => {
          const segments = [{ key: first }, ...rest];
          const text = formatSegments(segments);
          expect(parsePath(text)).toEqual({ ok: true, segments });
          // And as a --set: the value is whatever follows the first = outside quotes.
          expect(parseSetText(`${text}=7`)).toEqual({ ok: true, override: { path: text, value: 7 } });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws on any path text (fuzzed): a parse or a message', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const r = parsePath(text);
        if (!r.ok) expect(r.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('a path that spells a dotted name unquoted says how to quote it', () => {
    const doc = { tools: { 'gmail.send': { slots: 4 } } };
    expect(applyOverrides(doc, [{ path: 'tools.gmail.send.slots', value: 8 }]).problems).toEqual([
      'tools.gmail.send.slots: tools has no key "gmail" but has "gmail.send": a name with dots is quoted, tools["gmail.send"]',
    ]);
    expect(applyOverrides(doc, [{ path: 'tools["gmail.send"].slots', value: 8 }]).doc).toEqual({
      tools: { 'gmail.send': { slots: 8 } },
    });
  });
});

describe('keys that name a prototype', () => {
  it('__proto__, constructor and prototype are refused anywhere in a path, and pollute nothing', () => {
    for (const p of [
      '__proto__.polluted',
      '__proto__',
      'layers[0].__proto__',
      'a.constructor.prototype',
      'tools["__proto__"]',
    ])
      expect(parsePath(p), p).toMatchObject({ ok: false, message: expect.stringContaining('cannot be a key') });
    expect(applyOverrides({}, [{ path: '__proto__.polluted', value: 1 }]).problems).toHaveLength(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("and anywhere in a value, a variant's too", () => {
    expect(parseSetText('layers[0]={__proto__: {a: 1}}')).toEqual({
      ok: false,
      message: "the value has the key __proto__, which no scenario field has (it names an object's prototype)",
    });
    expect(parseSetText('a=[{b: {constructor: 1}}]')).toMatchObject({
      ok: false,
      message: expect.stringContaining('[0].b.constructor'),
    });
    const value = JSON.parse('{"__proto__": {"polluted": 1}}');
    expect(applyOverrides({}, [{ path: 'engine', value, origin: 'variant x' }]).problems).toEqual([
      "variant x: the value has the key __proto__, which no scenario field has (it names an object's prototype)",
    ]);
  });
});
