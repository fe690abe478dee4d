/** A light, print-friendly page: system fonts, cards, charts in a grid that fits 1280 px. */
export const PAGE_STYLE = `
:root { color-scheme: light; --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --card: #fff; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 20px 40px; }
header h1 { font-size: 22px; margin: 0 0 4px; }
header .meta { color: var(--muted); margin: 0 0 16px; }
header ul.notes { margin: -8px 0 16px; padding: 8px 12px 8px 28px; background: #fffbeb; border: 1px solid #fcd34d; border-radius: 8px; color: #92400e; }
header details.overrides { margin: -8px 0 16px; color: var(--muted); }
header details.overrides pre { margin: 6px 0 0; font-size: 12px; white-space: pre-wrap; }
h2 { font-size: 16px; margin: 28px 0 4px; }
p.note { color: var(--muted); margin: 0 0 10px; }
.card, .grid > div { background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.card { padding: 12px 16px; }
.grid { display: grid; gap: 12px; }
.grid > div { padding: 8px; min-width: 0; }
.chart { width: 100%; height: 320px; }
.chart.tall { height: 420px; }
.empty { height: 100%; min-height: 120px; display: flex; align-items: center; justify-content: center; color: var(--muted); text-align: center; padding: 0 24px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { font-weight: 600; color: var(--muted); }
td.good { color: #15803d; } td.warn { color: #b45309; } td.bad { color: #b91c1c; }
tr.pareto td { background: #eff6ff; }
td.best { font-weight: 700; }
.scroll { overflow-x: auto; }
footer { color: var(--muted); margin-top: 28px; font-size: 12px; }
`;
