import type { ResultFile, RunResult } from '../../run/metrics/result.js';
import { chartGrid, section, type GridCell } from './chart-grid.js';
import { chartWidth, fitLegend, round3, variantColor } from './chart-kit.js';
import type { ChartSpec } from './chart-spec.js';
import { engineChart } from './engine-chart.js';
import { headlineTable } from './headline-table.js';
import { hopsTable } from './hops-table.js';
import { escapeHtml } from './html-escape.js';
import { amplificationChart, goodputChart } from './overview-charts.js';
import { sharedScales } from './shared-scales.js';
import { limitsTable, toolsTable } from './tools-table.js';
import { latencyChart, loadChart, refusedChart } from './variant-charts.js';
import { overrideLines } from '../override-lines.js';

export interface ReportPage {
  title: string;
  /** HTML of the page's `<main>`, escaped. */
  body: string;
  charts: ChartSpec[];
}

/** Charts a row of the page holds side by side; more variants wrap onto further rows. */
const MAX_COLUMNS = 3;

/**
 * A row of per-variant charts, recording their specs in `charts`. Variants `make` has nothing
 * for (null) get no cell, so no half of a row is empty; `absent` says which they were.
 * Each chart keeps its variant's colour (its index in the file).
 */
function perVariantRow(
  vs: readonly RunResult[],
  key: string,
  charts: ChartSpec[],
  make: (v: RunResult, color: string) => ChartSpec['option'] | null,
  o: { tall?: boolean } = {},
): { grid: string; absent: string[] } {
  const made = vs.map((v, i) => ({ v, i, option: make(v, variantColor(i)) }));
  const shown = made.filter((m) => m.option !== null);
  const columns = Math.min(shown.length, MAX_COLUMNS);
  const cells: GridCell[] = shown.map(({ i, option }) => {
    const chart = { id: `${key}-${i}`, option: fitLegend(option as ChartSpec['option'], chartWidth(columns)) };
    charts.push(chart);
    return { chart, tall: o.tall };
  });
  return {
    grid: shown.length === 0 ? '' : chartGrid(cells, columns),
    absent: made.filter((m) => m.option === null).map((m) => m.v.name),
  };
}

function header(file: ResultFile): string {
  const vs = file.variants;
  const what =
    vs.length > 1 ? `compare of ${vs.length} variants (${vs.map((v) => v.name).join(', ')})` : `run of ${vs[0].name}`;
  const meta = [what, `seed ${file.seed}`, file.mode, `${round3(vs[0].durationMs / 1000)} s of arrivals`].join(' · ');
  return `<header><h1>stormlab report: ${escapeHtml(file.scenario)}</h1><p class="meta">${escapeHtml(meta)}</p>${notesList(file)}${overridesList(vs)}</header>\n<section class="card">${headlineTable(vs)}</section>`;
}

/** The result's notes (a stopped run, roots the drain cut off, …), one item each, where the figures start. */
function notesList(file: ResultFile): string {
  const notes = file.notes ?? [];
  if (notes.length === 0) return '';
  return `<ul class="notes">${notes.map((n) => `<li>${escapeHtml(n.message)}</li>`).join('')}</ul>`;
}

/** The fields a variant or the command line set, as the terminal summary lists them (older files: none). */
function overridesList(vs: readonly RunResult[]): string {
  const lines = overrideLines(vs);
  if (lines.length === 0) return '';
  return `<details class="overrides"><summary>What ran: ${lines.length} field${lines.length === 1 ? '' : 's'} overridden (the command line wins over a variant, a variant over the scenario)</summary><pre>${escapeHtml(lines.map((l) => l.trim()).join('\n'))}</pre></details>`;
}

/** The engine's section, charts only for the variants with an engine; none at all without one. */
function engineSection(row: { grid: string; absent: string[] }): string[] {
  if (row.grid === '') return [];
  const absent =
    row.absent.length === 0 ? '' : ` No engine in ${row.absent.join(', ')} (no throttle, budget or breaker to show).`;
  return [
    section(
      'Engine state',
      `Per engine layer: the throttle's drop probability (left axis), the retry budget's balance (right axis, dashed), and below them a band per layer, dark while its breaker was open.${absent}`,
      row.grid,
    ),
  ];
}

/**
 * The report of a run or compare result: headline figures, then amplification and goodput
 * per second for every variant in one chart each, then per variant side by side (load and
 * latency on one scale across variants): load against upstream attempts, what the upstream
 * refused and the engine shed, the engine's state, latency percentiles.
 */
export function resultReport(file: ResultFile): ReportPage {
  const vs = file.variants;
  const charts: ChartSpec[] = [
    { id: 'amplification', option: fitLegend(amplificationChart(file), chartWidth(2)) },
    { id: 'goodput', option: fitLegend(goodputChart(file), chartWidth(2)) },
  ];
  const overview = chartGrid(
    charts.map((chart) => ({ chart })),
    2,
  );
  const scales = sharedScales(vs);
  const same = vs.length > 1 ? ' Same scale for every variant.' : '';
  const hops = hopsTable(vs);
  const tools = toolsTable(vs);
  const limits = limitsTable(vs);
  const body = [
    header(file),
    ...(hops === ''
      ? []
      : [
          section(
            'Two hops',
            'With a gateway under test: hop 1 is what the driver sent the gateway and what it answered; hop 2 what reached the upstream behind it and what the upstream answered, counted by the upstream itself once it had nothing in flight and had been quiet for longer than a backoff; the total is hop 1 × hop 2, what reached the upstream per logical leaf call.',
            `<section class="card">${hops}</section>`,
          ),
        ]),
    ...(tools === ''
      ? []
      : [
          section(
            'Tools and side effects',
            'Per tool: executions of its effect at the tool service, duplicates (executions beyond the first of an intent), idempotency conflicts (attempts that found their key in progress), degraded and failed calls.',
            `<section class="card">${tools}</section>`,
          ),
        ]),
    ...(limits === ''
      ? []
      : [
          section(
            'Users and limits',
            'Per variant: submissions of the users (resubmissions run the whole tree again), submissions the entry limit refused with a retry-after hint and each tenant’s goodput, the inference queue’s estimated waits and the attempts that gave up on it or fell back to the smaller model.',
            `<section class="card">${limits}</section>`,
          ),
        ]),
    section(
      'Amplification and goodput',
      'One line per variant. Shaded: fault phases; dashed line: arrivals stop, the rest is the drain.',
      overview,
    ),
    section(
      'Offered load vs upstream attempts',
      `Per second. Without retries the upstream sees as many attempts as logical leaf calls (dashed grey); upstream attempts in the variant's colour.${same}`,
      perVariantRow(vs, 'load', charts, (v, c) => loadChart(v, c, scales)).grid,
    ),
    section(
      'Refused upstream and shed locally',
      `Per second: answers the upstream refused, and calls the engine refused before sending (dashed).${vs.length > 1 ? ' Each variant on its own scale.' : ''}`,
      perVariantRow(vs, 'refused', charts, (v, c) => refusedChart(v, c, scales)).grid,
    ),
    ...engineSection(perVariantRow(vs, 'engine', charts, (v, c) => engineChart(v, c, scales), { tall: true })),
    section(
      'Latency percentiles',
      `p50, p95 and p99 over the whole run, shades of the variant's colour (latency is kept in histograms, not per second).${same}`,
      perVariantRow(vs, 'latency', charts, (v, c) => latencyChart(v, c, scales)).grid,
    ),
  ].join('\n');
  return { title: `stormlab report: ${file.scenario}`, body, charts };
}
