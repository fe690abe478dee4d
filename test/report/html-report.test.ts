import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { echartsSource } from '../../src/report/html/echarts-source.js';
import { round3 } from '../../src/report/html/chart-kit.js';
import { htmlReport } from '../../src/report/html/html-report.js';
import { formatMetric } from '../../src/report/html/metric-format.js';
import { formatRate } from '../../src/report/format.js';
import { jsonForScript } from '../../src/report/html/html-escape.js';
import { readReportInput } from '../../src/report/report-input.js';
import { sweepPointsTable } from '../../src/report/html/sweep-points-table.js';
import { summaryTable } from '../../src/report/summary-table.js';
import type { SweepFile } from '../../src/report/sweep-file.js';
import type { ResultFile } from '../../src/run/metrics/result.js';
import { cli, tempDir, type CaptureOptions } from '../cli/capture-io.js';
import { fakeFile, fakeRun } from './fixture.js';
import { fakeSweep } from './sweep-fixture.js';

interface Embedded {
  kind: string;
  source: unknown;
  charts: Array<{
    id: string;
    option: {
      series: Array<
        { type: string; name: string; data: unknown[]; color?: string; label?: { show: boolean } } & {
          itemStyle?: { opacity: number };
        }
      >;
      title?: unknown;
      yAxis?: unknown;
    };
  }>;
}

const DATA = /<script type="application\/json" id="stormlab-data">([\s\S]*?)<\/script>/;

/** The JSON the page carries, parsed back. */
function embedded(html: string): Embedded {
  const m = DATA.exec(html);
  expect(m, 'an embedded data script').not.toBeNull();
  return JSON.parse(m![1]) as Embedded;
}

/** The page without the text of its inline scripts: the markup a browser would fetch resources for. */
function markup(html: string): string {
  return html.replace(/(<script\b[^>]*>)[\s\S]*?<\/script>/g, '$1</script>');
}

/** The chart boxes of the page: id → the number of series it says it draws. */
function boxes(html: string): Map<string, number> {
  return new Map(
    [...html.matchAll(/<div class="chart[^"]*" id="([^"]+)" data-series="(\d+)">/g)].map((m) => [m[1], Number(m[2])]),
  );
}

function expectSelfContained(html: string): void {
  expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
  expect(html.trimEnd().endsWith('</html>')).toBe(true);
  const tags = markup(html);
  // No resource the browser would fetch: no src, href, link, import or url() anywhere in the markup.
  expect(tags).not.toMatch(/\b(src|href)\s*=/i);
  expect(tags).not.toMatch(/<link\b|@import|url\(/i);
  expect(tags.match(/<script\b[^>]*>/g)).toEqual([
    '<script type="application/json" id="stormlab-data">',
    '<script>',
    '<script>',
  ]);
  expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`);
  // ECharts itself is inline, whole.
  expect(html).toContain(echartsSource());
  // Every chart box has its chart in the data, and the other way round, with as many series as it says.
  const data = embedded(html);
  expect([...boxes(html).keys()].sort()).toEqual(data.charts.map((c) => c.id).sort());
  for (const chart of data.charts) expect(boxes(html).get(chart.id), chart.id).toBe(chart.option.series.length);
}

let compare: ResultFile;
let compareText: string;

beforeAll(async () => {
  const r = await cli(['compare', 'retry-storm', '--duration', '10s', '--json', 'r.json', '-q']);
  compareText = r.files.get('r.json')!;
  expect(compareText, r.err).toBeDefined();
  compare = JSON.parse(compareText) as ResultFile;
});

describe('htmlReport of a result file', () => {
  it('is one self-contained page that carries the result and a chart for each view', () => {
    const html = htmlReport({ kind: 'result', file: compare });
    expectSelfContained(html);
    const data = embedded(html);
    expect(data.kind).toBe('result');
    expect(data.source).toEqual(compare);
    // Two across variants; per variant load, refused, latency; engine state only where the engine ran.
    expect(data.charts.map((c) => c.id)).toEqual([
      'amplification',
      'goodput',
      'load-0',
      'load-1',
      'refused-0',
      'refused-1',
      'engine-1',
      'latency-0',
      'latency-1',
    ]);
    // No empty half-panel: the engine's chart spans the row, the note says who has none.
    expect(html).not.toContain('class="empty"');
    expect(html).toContain('No engine in naive (no throttle, budget or breaker to show).');
    expect(html).toMatch(
      /grid-template-columns: repeat\(1, minmax\(0, 1fr\)\)"><div><div class="chart tall" id="engine-1"/,
    );
    expect(html.length).toBeLessThan(1_500_000);
  });

  it('draws each variant in one colour throughout, its attempts on the scale both load charts share', () => {
    const { charts } = embedded(htmlReport({ kind: 'result', file: compare }));
    const byId = (id: string) => charts.find((c) => c.id === id)!.option;
    const colors = byId('amplification').series.map((s) => s.color);
    expect(colors).toEqual(['#dc2626', '#2563eb']);
    for (const [i, color] of colors.entries()) {
      const load = byId(`load-${i}`);
      expect((load.title as { textStyle: { color: string } }).textStyle.color).toBe(color);
      expect(load.series.find((s) => s.name === 'upstream attempts /s')!.color).toBe(color);
      expect((byId(`latency-${i}`).title as { textStyle: { color: string } }).textStyle.color).toBe(color);
    }
    // No other series of any chart borrows a variant's colour for something else.
    const others = charts
      .flatMap((c) => c.option.series.map((s) => ({ id: c.id, name: s.name, color: s.color })))
      .filter((s) => colors.includes(s.color as string));
    for (const s of others)
      expect(['naive', 'engine', 'upstream attempts /s', 'shed locally /s'], `${s.id} ${s.name}`).toContain(s.name);
    // One y-axis top for both load charts: naive's storm is tall, the engine's trickle is low.
    const top = (id: string) => (byId(id).yAxis as { max: number }).max;
    expect(top('load-0')).toBe(top('load-1'));
    const peak = (i: number) => Math.max(...compare.variants[i].series.upstreamAttempts);
    expect(peak(0)).toBeGreaterThan(top('load-0') / 2);
    expect(peak(1)).toBeLessThan(top('load-1') / 10);
  });

  it('says apart an upstream the engine protected and tasks failing at a full outage', () => {
    const html = htmlReport({ kind: 'result', file: compare });
    expect(html).toContain('<th>upstream</th><th>tasks</th>');
    expect(html).toMatch(/<td>naive<\/td><td class="bad">stormed<\/td><td class="bad">failing<\/td>/);
    expect(html).toMatch(/<td>engine<\/td><td class="good">protected<\/td><td class="bad">failing<\/td>/);
  });

  it('draws amplification per second as attempts ÷ leaf calls, a gap where no leaf call started', () => {
    const { charts } = embedded(htmlReport({ kind: 'result', file: compare }));
    const amp = charts.find((c) => c.id === 'amplification')!.option.series;
    expect(amp.map((s) => s.name)).toEqual(['naive', 'engine']);
    const naive = compare.variants[0].series;
    const points = amp[0].data as Array<[number, number | null]>;
    expect(points).toHaveLength(naive.leafCalls.length);
    const i = naive.leafCalls.findIndex((c) => c > 0);
    expect(points[i][1]).toBeCloseTo(naive.upstreamAttempts[i] / naive.leafCalls[i], 2);
    // retry-storm: 3 attempts at each of 3 layers once the first retries have run.
    expect(points[5][1]).toBe(27);
    expect(points.filter(([, v]) => v === null).length).toBe(naive.leafCalls.filter((c) => c === 0).length);
  });

  it('shades the fault phases and shows the engine state with the breaker band', () => {
    const { charts } = embedded(htmlReport({ kind: 'result', file: compare }));
    const load = charts.find((c) => c.id === 'load-0')!.option.series[0] as unknown as {
      markArea: { data: Array<Array<{ xAxis: number }>> };
    };
    // retry-storm is down for the whole run: one fault phase from the start.
    expect(load.markArea.data).toHaveLength(1);
    expect(load.markArea.data[0][0].xAxis).toBe(0);
    const engine = charts.find((c) => c.id === 'engine-1')!.option.series;
    const layers = compare.variants[1].series.engine.map((e) => e.layer);
    expect(engine.map((s) => s.name)).toEqual([
      ...layers.flatMap((l) => [`drop · ${l}`, `budget · ${l}`]),
      ...layers.map(() => 'breaker open'),
    ]);
    // The orchestrator's breaker opens within seconds and stays open: its band is drawn.
    expect(engine[layers.length * 2].data.length).toBeGreaterThan(0);
  });

  it('escapes a scenario or variant named </script> so it cannot end the data or run', () => {
    const evil = '</script><script>alert(1)</script><!--';
    const file = fakeFile([fakeRun(evil, { roots: 40, leafAttempts: 3, okShare: 0.5 })]);
    file.scenario = evil;
    const html = htmlReport({ kind: 'result', file });
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<!--');
    expect(html).toContain('<h1>stormlab report: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--</h1>');
    expect((embedded(html).source as ResultFile).scenario).toBe(evil);
    expectSelfContained(html);
  });

  it('jsonForScript keeps every value and leaves no < in the text', () => {
    const value = { a: '</script>', b: '<!-- x -->', c: 'line\u2028sep\u2029' };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('htmlReport of a sweep file', () => {
  const two = (): SweepFile =>
    fakeSweep({
      params: [
        { path: 'engine.throttle.k', values: [1.1, 1.5, 2, 3] },
        { path: 'engine.retryBudget.ratio', values: [0.05, 0.1, 0.2] },
      ],
    });

  it('is self-contained, with the heatmap, the Pareto points and a table row per point', () => {
    const file = two();
    const html = htmlReport({ kind: 'sweep', file });
    expectSelfContained(html);
    const data = embedded(html);
    expect(data.kind).toBe('sweep');
    expect(data.source).toEqual(file);
    const [heatmap, pareto] = data.charts;
    expect(heatmap.option.series[0].data).toHaveLength(12);
    expect(pareto.option.series.map((s) => [s.name, s.data.length])).toEqual([
      ['other points', file.points.filter((p) => !p.pareto).length],
      ['Pareto front', file.points.filter((p) => p.pareto).length],
    ]);
    expect(file.points.some((p) => !p.pareto) && file.points.some((p) => p.pareto)).toBe(true);
    expect(html.match(/<tr class="pareto">/g)).toHaveLength(file.points.filter((p) => p.pareto).length);
    expect(html.match(/<tr/g)).toHaveLength(13);
    expect(html).toContain('<td class="best">');
  });

  it('labels every Pareto point; points at one place share one label naming them all', () => {
    const file = two();
    // Two points land on the same figures: one would hide the other without a shared label.
    file.points[1] = { ...file.points[1], figures: { ...file.points[0].figures } };
    const pareto = embedded(htmlReport({ kind: 'sweep', file })).charts[1].option;
    const data = pareto.series.flatMap((s) => s.data as Array<{ value: unknown[]; name: string }>);
    expect(data).toHaveLength(file.points.length);
    const labels = data.map((d) => d.value[3]);
    const shared = labels.filter((l) => String(l).startsWith('2×: '));
    expect(shared).toHaveLength(1);
    expect(shared[0]).toContain(' = ');
    expect(labels.filter((l) => l === '')).toHaveLength(1);
    expect(labels.filter((l) => l !== '' && !String(l).startsWith('2×'))).toHaveLength(file.points.length - 2);
    for (const s of pareto.series) {
      expect(s.label?.show).toBe(true);
      expect(s.itemStyle?.opacity).toBeLessThan(1);
    }
  });

  it('with more than two params, each cell holds the best over the others and says so', () => {
    const file = fakeSweep({
      params: [
        { path: 'a', values: [1, 2, 3] },
        { path: 'b', values: [0.1, 0.2] },
        { path: 'c', values: ['x', 'y'] },
      ],
      metric: 'amplification',
      higherIsBetter: false,
    });
    const { charts } = embedded(htmlReport({ kind: 'sweep', file }));
    const cells = charts[0].option.series[0].data as Array<{ value: [number, number, number] }>;
    expect(cells).toHaveLength(6);
    for (const cell of cells) {
      const [x, y, v] = cell.value;
      const there = file.points.filter(
        (p) => p.values[0] === file.params[0].values[x] && p.values[1] === file.params[1].values[y],
      );
      expect(v).toBeCloseTo(Math.min(...there.map((p) => p.metric!)), 2);
    }
    expect(JSON.stringify(charts[0].option)).toContain('each cell: the best over c');
  });

  it('with seeds, shows the spread of each point: heatmap and table cells ±, whiskers on the Pareto chart', () => {
    const file = fakeSweep({ params: [{ path: 'k', values: [1, 2] }] });
    file.seeds = [1, 2, 3];
    file.points = file.points.map((p) => ({
      ...p,
      spread: {
        metric: { low: (p.metric ?? 0) - 0.5, high: (p.metric ?? 0) + 0.5 },
        goodput: { low: p.figures.goodput - 0.5, high: p.figures.goodput + 0.5 },
        amplification: { low: p.figures.amplification - 0.1, high: p.figures.amplification + 0.1 },
        p99Ms: { low: p.figures.p99Ms - 200, high: p.figures.p99Ms + 200 },
      },
    }));
    const html = htmlReport({ kind: 'sweep', file });
    const { charts } = embedded(html);
    const cells = charts[0].option.series[0].data as Array<{ label: { formatter: string } }>;
    expect(cells.map((c) => c.label.formatter)).toEqual(
      file.points.map((p) => `${formatMetric('goodput', p.metric)}\n±${formatMetric('goodput', 0.5)}`),
    );
    expect(JSON.stringify(charts[0].option)).toContain('over 3 seeds: mean ± half the 95 % interval');
    const whiskers = charts[1].option.series.find((s) => s.type === 'lines') as { data: Array<{ coords: number[][] }> };
    expect(whiskers.data).toHaveLength(2 * file.points.length);
    const p0 = file.points[0];
    expect(whiskers.data[0].coords).toEqual([
      [round3(p0.figures.amplification), round3(p0.figures.goodput - 0.5)],
      [round3(p0.figures.amplification), round3(p0.figures.goodput + 0.5)],
    ]);
    expect(html).toContain('seeds 1–3');
    expect(html).toContain(`${formatRate(p0.figures.goodput)} ±${formatRate(0.5)}`);
    // One seed: none of it.
    const plain = embedded(htmlReport({ kind: 'sweep', file: fakeSweep({ params: [{ path: 'k', values: [1, 2] }] }) }));
    expect(plain.charts[1].option.series.some((s) => s.type === 'lines')).toBe(false);
    expect(JSON.stringify(plain.charts[0].option)).not.toContain('±');
  });

  it('with one param draws one row', () => {
    const file = fakeSweep({ params: [{ path: 'engine.throttle.k', values: [1, 2, 3, 4] }] });
    const { charts } = embedded(htmlReport({ kind: 'sweep', file }));
    const cells = charts[0].option.series[0].data as Array<{ value: number[] }>;
    expect(cells.map((c) => c.value.slice(0, 2))).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
  });
});

describe('readReportInput', () => {
  it('reads both kinds back as written, and a file starting with a byte-order mark', () => {
    expect(readReportInput(compareText, 'r.json')).toEqual({ ok: true, input: { kind: 'result', file: compare } });
    const sweep = fakeSweep({ params: [{ path: 'k', values: [1, 2] }] });
    expect(readReportInput(`\uFEFF${JSON.stringify(sweep)}`, 's.json')).toEqual({
      ok: true,
      input: { kind: 'sweep', file: sweep },
    });
  });
});

describe('stormlab report', () => {
  let dir: string;
  let sweep: SweepFile;

  /** The compare result with one field replaced (a JSON path as keys and indexes). */
  function broken(path: Array<string | number>, value: unknown): string {
    const doc = JSON.parse(compareText) as Record<string, unknown>;
    let at: Record<string | number, unknown> = doc;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
    if (value === undefined) delete at[path[path.length - 1]];
    else at[path[path.length - 1]] = value;
    return JSON.stringify(doc, null, 2);
  }

  beforeAll(() => {
    sweep = fakeSweep({
      params: [
        { path: 'engine.throttle.k', values: [1.5, 2] },
        { path: 'engine.retryBudget.ratio', values: [0.1, 0.2] },
      ],
    });
    const offGrid = structuredClone(sweep);
    offGrid.points[1].values[0] = 9;
    const short = structuredClone(sweep);
    short.points[2].values = [1.5];
    dir = tempDir({
      'r.json': compareText,
      's.json': JSON.stringify(sweep),
      'empty.json': '  \n',
      'syntax.json': '{\n  "schema": "stormlab.result/v1",\n  "seed": 1,,\n}\n',
      'list.json': '[1, 2]',
      'no-schema.json': '{"scenario": "x"}',
      'v2.json': '{"schema": "stormlab.result/v2"}',
      'ok-not-number.json': broken(['variants', 0, 'series', 'ok', 3], 'many'),
      'no-variants.json': broken(['variants'], undefined),
      'several.json': broken(['variants', 1], { name: 'x' }),
      'off-grid.json': JSON.stringify(offGrid),
      'short.json': JSON.stringify(short),
    });
    mkdirSync(join(dir, 'a-dir'));
    writeFileSync(join(dir, 'r-copy.json'), compareText);
  });

  it('prints the summary table of a result file, as run and compare do', async () => {
    const r = await cli(['report', 'r.json'], { cwd: dir });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(summaryTable(compare, { color: false, width: 80 }));
    expect(r.out.split('\n')[0]).toMatch(/^amplification naive 27\.0× · engine /);
  });

  it('prints the points of a sweep file', async () => {
    const r = await cli(['report', 's.json'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.out).toBe(sweepPointsTable(sweep));
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe('brownout · variant engine · seed 1 · 4 points · metric goodput (higher is better, * best)');
    expect(lines[2]).toMatch(
      /^engine\.throttle\.k +engine\.retryBudget\.ratio +amplification +goodput +success +root p99 +recovery +shed +wasted tokens +pareto$/,
    );
    expect(lines.slice(3)).toHaveLength(4);
    expect(lines[3]).toMatch(/^1\.5 +0\.1 +\S+×/);
    expect(r.out.match(/\*/g)).toHaveLength(2); // the legend's and the best point's
  });

  it('--html writes the report of either kind and says where, with its size', async () => {
    for (const [input, kind] of [
      ['r.json', 'result'],
      ['s.json', 'sweep'],
    ] as const) {
      const r = await cli(['report', input, '--html', 'out/report.html'], { cwd: dir });
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^wrote out\/report\.html \(1\.\d\d MB\)\n$/);
      const html = r.files.get('out/report.html')!;
      expect(embedded(html).kind).toBe(kind);
      expectSelfContained(html);
    }
  });

  /** A mistake is exit 2 and exactly one line on stderr, no stack, nothing on stdout. */
  async function expectUsage(argv: string[], line: string | RegExp, options: CaptureOptions = {}): Promise<void> {
    const r = await cli(argv, { cwd: dir, ...options });
    expect(r.err).not.toMatch(/^\s+at /m);
    expect(r.err.split('\n')).toHaveLength(2);
    if (typeof line === 'string') expect(r.err).toBe(`${line}\n`);
    else expect(r.err).toMatch(line);
    expect(r.out).toBe('');
    expect(r.files.size).toBe(0);
    expect(r.code).toBe(2);
  }

  it('a missing file, a directory or an empty file is exit 2, one line', async () => {
    await expectUsage(['report', 'nope.json'], 'stormlab: cannot read nope.json: no such file');
    await expectUsage(['report', 'a-dir', '--html', 'x.html'], 'stormlab: cannot read a-dir: it is a directory');
    await expectUsage(
      ['report', 'empty.json'],
      /^stormlab: empty\.json: the file is empty, expected stormlab\.result\/v1 \(from run or compare --json\) or stormlab\.sweep\/v1/,
    );
    await expectUsage(['report'], "stormlab: missing required argument 'file'");
  });

  it('text that is not JSON says where it broke, line:column', async () => {
    await expectUsage(['report', 'syntax.json'], /^stormlab: syntax\.json:3:13: JSON syntax error: /);
  });

  it('a missing, unknown or misplaced schema is exit 2 and names what would do', async () => {
    await expectUsage(
      ['report', 'list.json'],
      'stormlab: list.json: expected a JSON object with a "schema" field, got an array',
    );
    await expectUsage(
      ['report', 'no-schema.json'],
      /^stormlab: no-schema\.json: missing "schema", expected stormlab\.result\/v1 .* or stormlab\.sweep\/v1 /,
    );
    await expectUsage(
      ['report', 'v2.json'],
      /^stormlab: v2\.json: unknown schema "stormlab\.result\/v2" \(did you mean stormlab\.result\/v1\?\), expected /,
    );
  });

  it('a file of the wrong shape names the JSON path of the first problems', async () => {
    await expectUsage(
      ['report', 'ok-not-number.json'],
      'stormlab: ok-not-number.json: variants[0].series.ok[3]: expected a number, got "many"',
    );
    await expectUsage(
      ['report', 'no-variants.json'],
      'stormlab: no-variants.json: variants: missing, expected an array',
    );
    await expectUsage(
      ['report', 'several.json'],
      /^stormlab: several\.json: variants\[1\]\.durationMs: missing, expected a number; variants\[1\]\.amplification: missing, expected a number; variants\[1\]\.goodput: missing, expected a number \(and \d+ more\)\n$/,
    );
    await expectUsage(
      ['report', 'off-grid.json'],
      'stormlab: off-grid.json: points[1].values[0]: expected one of the values of params[0] (engine.throttle.k), got 9',
    );
    await expectUsage(
      ['report', 'short.json'],
      'stormlab: short.json: points[2].values: expected 2 values (one per param), got 1',
    );
  });

  it('an --html path that cannot be written is exit 2, naming the flag and why', async () => {
    await expectUsage(
      ['report', 'r.json', '--html', 'gone/report.html'],
      'stormlab: --html: cannot write gone/report.html: its directory does not exist',
      { writeError: 'ENOENT' },
    );
    await expectUsage(
      ['report', 's.json', '--html', 'a-dir'],
      'stormlab: --html: cannot write a-dir: it is a directory',
      { writeError: 'EISDIR' },
    );
  });
});
