import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { cli, tempDir } from '../cli/capture-io.js';
import { simulatedSweep } from './sweep-fixture.js';

/**
 * The HTML report in a real browser (Debian's Chromium): it loads with no error and no
 * request leaving the file, every chart box gets an ECharts instance with the series it
 * should have, and every chart's canvas has ink on it. Skipped when Chromium is not installed,
 * unless STORMLAB_REQUIRE_BROWSER=1 (CI) makes that a failure.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const available = existsSync(CHROMIUM);
const required = process.env.STORMLAB_REQUIRE_BROWSER === '1';
const SLOW = 60_000;

interface ChartState {
  id: string;
  /** The number of series the box says it draws. */
  expected: number;
  /** Series of its ECharts instance, or -1 when it has none. */
  series: number;
  /** Series with at least one data point (or a mark). */
  drawn: number;
  /** Canvas pixels neither transparent nor the page's white. */
  inked: number;
}

/** Runs in the page (a string: the test's TypeScript knows no DOM). */
const CHART_STATES = `Array.from(document.querySelectorAll('.chart')).map(function (el) {
  var chart = echarts.getInstanceByDom(el);
  var canvas = el.querySelector('canvas');
  var inked = 0;
  if (canvas) {
    var px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && (px[i] < 245 || px[i + 1] < 245 || px[i + 2] < 245)) inked++;
  }
  var series = chart ? chart.getOption().series : [];
  var drawn = series.filter(function (s) { return (s.data && s.data.length > 0) || s.markArea; }).length;
  return { id: el.id, expected: Number(el.dataset.series), series: chart ? series.length : -1, drawn: drawn, inked: inked };
})`;

let browser: Browser | undefined;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  if (available) browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, SLOW);

afterAll(async () => {
  await browser?.close();
});

/** Skips the test (with the reason) when there is no Chromium, or fails it when one is required. */
function needBrowser(ctx: TestContext): Browser {
  if (browser !== undefined) return browser;
  if (required)
    throw new Error(`STORMLAB_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  ctx.skip(
    `no Chromium at ${CHROMIUM} (apt-get install chromium to run it; STORMLAB_REQUIRE_BROWSER=1 makes this a failure)`,
  );
  throw new Error('unreachable');
}

/** `stormlab report <input> --html`, written next to the input. */
async function report(input: string): Promise<string> {
  const r = await cli(['report', input, '--html', 'report.html'], { cwd: dir });
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const path = join(dir, `${input}.html`);
  writeFileSync(path, r.files.get('report.html')!);
  return path;
}

/** Opens the page at 1280 px and collects what went wrong: page errors, console errors, requests leaving the file. */
async function open(b: Browser, path: string): Promise<{ page: Page; problems: string[] }> {
  const page = await b.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (r.url() !== pathToFileURL(path).href) problems.push(`request: ${r.url()}`);
  });
  await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
  return { page, problems };
}

async function expectCharts(page: Page, ids: string[]): Promise<void> {
  const charts = (await page.evaluate(CHART_STATES)) as ChartState[];
  expect(charts.map((c) => c.id)).toEqual(ids);
  for (const c of charts) {
    expect(c.series, `${c.id}: series`).toBe(c.expected);
    expect(c.series, `${c.id}: series`).toBeGreaterThan(0);
    expect(c.drawn, `${c.id}: series with data`).toBeGreaterThan(0);
    expect(c.inked, `${c.id}: inked pixels`).toBeGreaterThan(2000);
  }
  // Fits 1280 px: nothing sticks out sideways.
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(dir, name);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(50_000);
}

describe('the HTML report in Chromium', () => {
  it(
    'draws every chart of a compare of retry-storm, offline and without errors',
    async (ctx) => {
      const b = needBrowser(ctx);
      const run = await cli(['compare', 'retry-storm', '--duration', '10s', '--json', 'compare.json', '-q'], {
        cwd: dir,
      });
      expect([0, 1], run.err).toContain(run.code); // 1: the naive variant may fail the scenario's expectations
      writeFileSync(join(dir, 'compare.json'), run.files.get('compare.json')!);
      const { page, problems } = await open(b, await report('compare.json'));
      await expectCharts(page, [
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
      expect(await page.textContent('h1')).toBe('stormlab report: retry-storm');
      await screenshot(page, 'compare.png');
      expect(problems).toEqual([]);
      await page.close();
    },
    SLOW,
  );

  it(
    'draws the heatmap and the Pareto points of a sweep',
    async (ctx) => {
      const b = needBrowser(ctx);
      const sweep = await simulatedSweep('brownout', [
        { path: 'engine.throttle.k', values: [1.5, 3] },
        { path: 'engine.retryBudget.ratio', values: [0.05, 0.2] },
      ]);
      writeFileSync(join(dir, 'sweep.json'), JSON.stringify(sweep));
      const { page, problems } = await open(b, await report('sweep.json'));
      await expectCharts(page, ['heatmap', 'pareto']);
      expect(await page.locator('table.points tr').count()).toBe(1 + sweep.points.length);
      await screenshot(page, 'sweep.png');
      expect(problems).toEqual([]);
      await page.close();
    },
    SLOW,
  );
});
