import { describe, expect, it } from 'vitest';
import type { Check } from '../../src/report/check.js';
import { junitXml } from '../../src/report/junit.js';
import { elements, parseXml, type XmlElement } from './strict-xml.js';

const CHECKS: Check[] = [
  {
    name: 'amplification < 1.5',
    group: 'naive',
    status: 'fail',
    actual: '27.0×',
    expected: '< 1.5',
    message: 'amplification 27.0× is not < 1.5',
  },
  { name: 'amplification < 1.5', group: 'engine', status: 'pass', actual: '1.07×', expected: '< 1.5' },
  { name: 'goodput > 5', group: 'engine', status: 'pass', actual: '9.80/s', expected: '> 5' },
  {
    name: 'live.maxPending < 10',
    group: 'engine',
    status: 'skip',
    actual: '',
    expected: '< 10',
    message: "live.maxPending is not in this run's result (live runs only)",
  },
];

const num = (el: XmlElement, attr: string): number => Number(el.attrs[attr]);

describe('strict-xml (the checker itself)', () => {
  it.each([
    ['<a><b></a>', /<\/a> closes <b>/],
    ['<a>1 < 2</a>', /expected a name/],
    ['<a x="1" x="2"/>', /duplicate attribute x/],
    ['<a x="a<b"/>', /raw < in an attribute/],
    ['<a>fish & chips</a>', /a raw &/],
    ['<a>&nbsp;</a>', /unknown entity &nbsp;/],
    ['<a/><b/>', /content after the root/],
    ['<a>\uFFFF</a>', /U\+FFFF is not allowed/],
    ['<a>\u0001</a>', /U\+0001 is not allowed/],
    ['<a x=1/>', /expected a quoted value/],
    ['<a', /expected whitespace|unclosed|expected/],
  ])('rejects %j', (xml, why) => {
    expect(() => parseXml(xml)).toThrow(why);
  });

  it('reads entities and character references back', () => {
    const root = parseXml(
      '<?xml version="1.0" encoding="UTF-8"?>\n<a t="&lt;&amp;&quot;&apos;&#65;&#x42;">x &gt; y<!-- c --></a>',
    );
    expect(root.attrs.t).toBe('<&"\'AB');
    expect(root.text).toBe('x > y');
  });
});

describe('junitXml', () => {
  const root = parseXml(junitXml('stormlab retry-storm', CHECKS));

  it('is well-formed, with a declaration and one <testsuites> root', () => {
    expect(junitXml('s', CHECKS).startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    expect(root.name).toBe('testsuites');
    expect(root.attrs.name).toBe('stormlab retry-storm');
  });

  it('counts tests, failures and skips on the root and on each suite, matching the test cases', () => {
    expect([num(root, 'tests'), num(root, 'failures'), num(root, 'skipped'), num(root, 'errors')]).toEqual([
      4, 1, 1, 0,
    ]);
    const suites = root.children;
    expect(suites.map((s) => s.name)).toEqual(['testsuite', 'testsuite']);
    expect(suites.map((s) => s.attrs.name)).toEqual(['stormlab retry-storm · naive', 'stormlab retry-storm · engine']);
    for (const s of suites) {
      const cases = s.children.filter((c) => c.name === 'testcase');
      expect(cases.length).toBe(num(s, 'tests'));
      expect(cases.filter((c) => elements(c, 'failure').length === 1).length).toBe(num(s, 'failures'));
      expect(cases.filter((c) => elements(c, 'skipped').length === 1).length).toBe(num(s, 'skipped'));
    }
    expect(suites.map((s) => [num(s, 'tests'), num(s, 'failures'), num(s, 'skipped')])).toEqual([
      [1, 1, 0],
      [3, 0, 1],
    ]);
  });

  it('one test case per check, named after it, its class the suite and group', () => {
    const cases = elements(root, 'testcase');
    expect(cases.map((c) => [c.attrs.classname, c.attrs.name])).toEqual(
      CHECKS.map((c) => [`stormlab retry-storm.${c.group}`, c.name]),
    );
  });

  it('a failure carries the message and the figures; a skip its reason; a pass nothing', () => {
    const [fail, pass, , skip] = elements(root, 'testcase');
    const failure = elements(fail, 'failure')[0];
    expect(failure.attrs).toEqual({ message: 'amplification 27.0× is not < 1.5', type: 'expectation' });
    expect(failure.text).toBe('actual 27.0×, expected < 1.5');
    expect(elements(skip, 'skipped')[0].attrs.message).toBe(
      "live.maxPending is not in this run's result (live runs only)",
    );
    expect(pass.children).toEqual([]);
  });

  it('a failure without a message says the figures', () => {
    const root2 = parseXml(junitXml('s', [{ name: 'x', group: 'g', status: 'fail', actual: '', expected: '< 1' }]));
    expect(elements(root2, 'failure')[0].attrs.message).toBe('actual —, expected < 1');
  });

  it('escapes < & " \' and > in names, groups, figures and messages, and reads back the same text', () => {
    const nasty = `a<b & "c" 'd' > e`;
    const checks: Check[] = [
      {
        name: nasty,
        group: `g<&"'>`,
        status: 'fail',
        actual: `1 < 2 & 3`,
        expected: `< "4"`,
        message: `it's <bad> & "worse"`,
      },
    ];
    const xml = junitXml(`suite "&<'>`, checks);
    const r = parseXml(xml);
    const tc = elements(r, 'testcase')[0];
    expect(r.attrs.name).toBe(`suite "&<'>`);
    expect(tc.attrs.name).toBe(nasty);
    expect(tc.attrs.classname).toBe(`suite "&<'>.g<&"'>`);
    expect(elements(tc, 'failure')[0].attrs.message).toBe(`it's <bad> & "worse"`);
    expect(elements(tc, 'failure')[0].text).toBe(`actual 1 < 2 & 3, expected < "4"`);
  });

  it('drops characters XML cannot hold (controls, U+FFFE/U+FFFF, lone surrogates) and keeps the rest', () => {
    const checks: Check[] = [
      { name: 'a\u0001b\uFFFEc\uFFFFd\uD800e', group: 'g\u001b[31m', status: 'pass', actual: '', expected: '' },
    ];
    const r = parseXml(junitXml('s', checks));
    expect(elements(r, 'testcase')[0].attrs.name).toBe('abcde');
    expect(elements(r, 'testsuite')[0].attrs.name).toBe('s · g[31m');
    expect(elements(parseXml(junitXml('s', [{ ...checks[0], name: 'emoji 🌩 ok' }])), 'testcase')[0].attrs.name).toBe(
      'emoji 🌩 ok',
    );
  });

  it('no checks: a well-formed empty report', () => {
    const r = parseXml(junitXml('s', []));
    expect([num(r, 'tests'), num(r, 'failures'), r.children.length]).toEqual([0, 0, 0]);
  });
});
