import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { escapeControls, NO_CONTROL_CHARS } from '../../src/scenario/control-chars.js';
import { BASE, edit, problemsOf } from '../scenario/helpers.js';
import { cli, tempDir } from './capture-io.js';

/** What the hostile-input sweep tried: clear the screen, colour, and forge a line; set the title. */
const CLEAR = '\u001b[2J\u001b[31mRED\nFAKE LINE';
const TITLE = 'llm\u001b]0;pwned\u0007';
const q = (s: string) => JSON.stringify(s);

/** Any control character but the newline that ends a line (and a tab, which tables never hold either). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('control characters in names are refused at load, one line each', () => {
  it('escapeControls writes each as JSON does, and leaves other text alone', () => {
    expect(escapeControls(CLEAR)).toBe('\\u001b[2J\\u001b[31mRED\\nFAKE LINE');
    expect(escapeControls(TITLE)).toBe('llm\\u001b]0;pwned\\u0007');
    expect(escapeControls('\u009b31m\u007f')).toBe('\\u009b31m\\u007f');
    expect(escapeControls('gmail.send ✓ é')).toBe('gmail.send ✓ é');
    expect(NO_CONTROL_CHARS.test('gmail.send ✓ é')).toBe(true);
    expect(NO_CONTROL_CHARS.test(TITLE)).toBe(false);
  });

  it('scenario, layer, model, tool, tenant, stage, variant, limit and alias names, and references', () => {
    const TOOLS = `${BASE}tools:\n  gmail.send: { latency: 30ms }\n`;
    const cases: Array<[string, string]> = [
      [
        edit('name: t', `name: ${q(CLEAR)}`),
        `name: expected a scenario name without control characters, got ${q(CLEAR)}`,
      ],
      [
        edit('name: agent', `name: ${q(TITLE)}`),
        `layers[0].name: expected a layer name without control characters, got ${q(TITLE)}`,
      ],
      [
        edit('name: primary', `name: ${q('p\u0007')}`),
        `upstream.models[0].name: expected a model name without control characters, got ${q('p\u0007')}`,
      ],
      [
        `${BASE}tools:\n  ${q('gmail\u001bsend')}: { latency: 30ms }\n`,
        `tools["gmail\\u001bsend"]: expected a tool name without control characters, got ${q('gmail\u001bsend')}`,
      ],
      [
        edit('fanout: 2,', `fanout: 2, tools: [{ kind: tool, tool: ${q('gmail\u001b')}, sideEffect: false }],`, TOOLS),
        `layers[0].tools[0].tool: expected a tool name without control characters, got ${q('gmail\u001b')}`,
      ],
      [
        `${TOOLS}tenants: [{ name: ${q('acme\u001b[2J')} }]\n`,
        `tenants[0].name: expected a tenant name without control characters, got ${q('acme\u001b[2J')}`,
      ],
      [
        `${BASE}stages: { ${q('model\u0007')}: 5s }\n`,
        `stages["model\\u0007"]: expected a stage name without control characters, got ${q('model\u0007')}`,
      ],
      [
        `${BASE}variants: { ${q('v\u001b')}: { arrival.rate: 2 } }\n`,
        `variants["v\\u001b"]: expected a variant name without control characters, got ${q('v\u001b')}`,
      ],
      [
        edit(
          'upstream:',
          `engine: { limits: [{ name: ${q('tpm\u001b')}, unit: tokens, rate: 1000, per: minute }] }\nupstream:`,
        ),
        `engine.limits[0].name: expected a limit name without control characters, got ${q('tpm\u001b')}`,
      ],
      [
        edit('models:\n', `aliases: { ${q('gpt\u001b')}: primary }\n  models:\n`),
        `upstream.aliases["gpt\\u001b"]: expected a model alias without control characters, got ${q('gpt\u001b')}`,
      ],
    ];
    for (const [text, line] of cases) {
      const problems = problemsOf(text);
      // A reference is also checked against what it names (`unknown tool "gmail\u001b"`).
      if (line.startsWith('layers[0].tools')) expect(problems, line).toContain(line);
      else expect(problems, line).toEqual([line]);
    }
  });

  it('a --set name is refused as the flag’s, and the line printed has no raw control character', async () => {
    const dir = tempDir({ 'ok.yaml': BASE });
    const r = await cli(['run', 'ok.yaml', '--set', `layers[0].name=${q(TITLE)}`], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `stormlab: --set "layers[0].name=\\"llm\\\\u001b]0;pwned\\\\u0007\\"": layers[0].name: expected a layer name without control characters, got "llm\\u001b]0;pwned\\u0007"\n`,
    );
    expect(r.err).not.toMatch(RAW_CONTROL);
  });

  it('a file or flag holding escapes: the error line is escaped, one line', async () => {
    const dir = tempDir();
    for (const argv of [
      ['run', `x${CLEAR}.yaml`],
      ['report', `x${CLEAR}.json`],
      ['run', `--x${CLEAR}`],
    ]) {
      const r = await cli(argv, { cwd: dir });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err.split('\n').filter((l) => l !== '')).toHaveLength(1);
      expect(r.err).not.toMatch(RAW_CONTROL);
      expect(r.err).toContain('\\u001b[2J');
    }
  });
});

describe('names read back from a result file are escaped in every output', () => {
  let dir: string;
  beforeAll(async () => {
    dir = tempDir({ 'ok.yaml': BASE });
    const run = await cli(['compare', 'ok.yaml', '--json', 'clean.json', '--no-ui', '-q'], { cwd: dir });
    expect(run.code, run.err).toBe(0);
    // A result file edited (or written elsewhere) to hold terminal escapes in its names.
    const hostile = run.files
      .get('clean.json')!
      .replaceAll('"agent"', q(CLEAR))
      .replaceAll('"primary"', q(TITLE))
      .replace('"scenario": "t"', `"scenario": ${q(`t${CLEAR}`)}`)
      .replaceAll('"naive"', q(`naive${TITLE}`));
    expect(hostile).toContain('\\u001b[2J');
    writeFileSync(join(dir, 'clean.json'), run.files.get('clean.json')!);
    writeFileSync(join(dir, 'hostile.json'), hostile);
  });

  it('report: the text summary and the HTML hold the names escaped, never raw', async () => {
    const text = await cli(['report', 'hostile.json'], { cwd: dir });
    expect(text.code, text.err).toBe(0);
    expect(text.out).not.toMatch(RAW_CONTROL);
    expect(text.out).toContain('\\u001b[2J\\u001b[31mRED\\nFAKE LINE');
    expect(text.out.split('\n').some((l) => l.startsWith('FAKE LINE'))).toBe(false);
    const r = await cli(['report', 'hostile.json', '--html', 'r.html'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    const html = r.files.get(join(dir, 'r.html')) ?? r.files.get('r.html');
    expect(html).toBeDefined();
    expect(html).not.toMatch(RAW_CONTROL);
    expect(html).toContain('\\u001b[2J');
  });

  it('diff: every line escaped, either side', async () => {
    const same = await cli(['diff', 'hostile.json', 'hostile.json'], { cwd: dir });
    expect(same.code, same.err).toBe(0);
    expect(same.out).toMatch(/^comparing hostile.json with hostile.json/);
    expect(same.out).toContain('t\\u001b[2J\\u001b[31mRED\\nFAKE LINE');
    expect(same.out).toContain('naivellm\\u001b]0;pwned\\u0007');
    expect(same.out).not.toMatch(RAW_CONTROL);
    for (const argv of [
      ['diff', 'clean.json', 'hostile.json'],
      ['diff', 'hostile.json', 'clean.json'],
    ]) {
      const r = await cli(argv, { cwd: dir });
      expect(r.out + r.err).not.toMatch(RAW_CONTROL);
      expect(r.out.split('\n').some((l) => l.startsWith('FAKE LINE'))).toBe(false);
    }
  });
});
