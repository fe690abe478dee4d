// Prints the README's table of bundled scenarios with their figures: `npm run scenario-table`.
// Every variant of every bundled scenario is simulated as `stormlab compare <name>` runs it
// (seed 1, virtual time), so the figures are the same on every machine;
// test/readme-scenario-table.test.ts fails when the README's copy is stale.
import { formatPercent, formatRate, formatTimes } from '../src/report/format.js';
import { Simulation } from '../src/run/sim/simulation.js';
import { bundledDescription, listBundledScenarios } from '../src/scenario/bundled.js';
import { loadScenario } from '../src/scenario/load-scenario.js';

/** Scenarios whose figures only mean something against real HTTP (`--mode live`). */
const LIVE_ONLY = new Set(['throughput']);

/** One figure of every variant: `naive 12.2× · engine 1.30×`. */
type Figures = [amplification: string, goodput: string, success: string];

function figures(name: string, file: string): Figures {
  if (LIVE_ONLY.has(name)) return ['— (`--mode live`)', '—', '—'];
  const scenario = loadScenario(file);
  const runs = scenario.variants.map((v) => {
    const s = loadScenario(file, { variant: v.name });
    const sim = new Simulation({
      name: v.name,
      seed: s.seed,
      durationMs: s.durationMs,
      drainMs: s.drainMs,
      traffic: s.traffic,
      upstream: s.upstream,
    });
    return { name: v.name, r: sim.run() };
  });
  const each = (f: (r: (typeof runs)[number]['r']) => string) => runs.map((x) => `${x.name} ${f(x.r)}`).join(' · ');
  return [
    each((r) => formatTimes(r.amplification)),
    each((r) => formatRate(r.goodput)),
    each((r) => formatPercent(r.successRate)),
  ];
}

/** The Markdown table, columns padded as the README keeps its tables. */
export function scenarioTable(): string {
  const head = ['scenario', 'what it shows', 'amplification', 'goodput', 'success'];
  const rows = listBundledScenarios().map((s) => [
    `\`${s.name}\``,
    bundledDescription(s.file),
    ...figures(s.name, s.file),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => [...r[i]].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c + ' '.repeat(width[i] - [...c].length)).join(' | ')} |`;
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(scenarioTable());
