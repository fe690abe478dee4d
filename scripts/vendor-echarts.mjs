// Copies the one ECharts file the HTML report inlines (and its licence) next to the compiled
// report code in dist/, so an installed stormlab needs no echarts package at run time.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const source = require.resolve('echarts/dist/echarts.min.js');
const out = join(root, 'dist', 'report', 'html');
mkdirSync(out, { recursive: true });
copyFileSync(source, join(out, 'echarts.min.js'));
copyFileSync(join(dirname(source), '..', 'LICENSE'), join(out, 'echarts.LICENSE.txt'));
