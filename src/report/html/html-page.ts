import type { ReportData } from './chart-spec.js';
import { echartsSource } from './echarts-source.js';
import { escapeHtml, jsonForScript } from './html-escape.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** The element id of the embedded JSON: `JSON.parse(document.getElementById(REPORT_DATA_ID).textContent)`. */
export const REPORT_DATA_ID = 'stormlab-data';

/**
 * Nothing may leave the page: no fetch, no external script, style, image or font. A report
 * that tried would show a console error rather than quietly depend on the network.
 */
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/** One self-contained HTML file: `body` (already escaped HTML), the data as JSON, ECharts and the page script inline. */
export function htmlPage(title: string, body: string, data: ReportData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="stormlab report">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main>
${body}
<footer>Made by <code>stormlab report</code>. Self-contained: the charts are drawn by ECharts (Apache-2.0), inlined below; the data is in the <code>#${REPORT_DATA_ID}</code> script element as JSON.</footer>
</main>
<script type="application/json" id="${REPORT_DATA_ID}">${jsonForScript(data)}</script>
<script>${echartsSource()}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
