import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { printTable, type Row } from './measure.js';

const CHILD = fileURLToPath(new URL('./calibrate-child.ts', import.meta.url));

interface ChildRun {
  roots: number;
  spans: number;
  bytes: number;
  wallMs: number;
  cpuMs: number;
  peakOpenTraces: number;
  rssBeforeMb: number;
  peakRssMb: number;
}

function child(roots: number): ChildRun {
  const out = execFileSync(process.execPath, ['--import', 'tsx', CHILD, String(roots)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as ChildRun;
}

/**
 * `stormlab calibrate`'s reading and fitting (`observe` + `derive`) of ~100k and ~1M spans of
 * synthetic multi-agent traces (JSON Lines, ~440 bytes a span), each in a child process of its
 * own: spans per second of CPU time (the steadier figure on a shared machine; wall time beside
 * it) and peak RSS. Memory is flat when the 1M-span run peaks where the 100k one does: what is
 * held is the traces open at once (a rate × the 60 s grace), not the file.
 */
export async function calibrateSuite(): Promise<Row[]> {
  const runs = [5_000, 50_000].map(child);
  printTable(
    'calibrate: read + fit OTLP JSON Lines (observe + derive), one child process each',
    runs.map((r) => ({
      spans: r.spans,
      MB: r.bytes / 1e6,
      'spans/s (cpu)': Math.round(r.spans / (r.cpuMs / 1000)),
      'spans/s (wall)': Math.round(r.spans / (r.wallMs / 1000)),
      'open traces (peak)': r.peakOpenTraces,
      'peak RSS MB': Math.round(r.peakRssMb),
      'RSS before MB': Math.round(r.rssBeforeMb),
    })),
  );
  return runs.flatMap((r) => [
    {
      suite: 'calibrate',
      name: `spans/s cpu (${r.spans} spans)`,
      value: Math.round(r.spans / (r.cpuMs / 1000)),
      unit: 'spans/s',
    },
    {
      suite: 'calibrate',
      name: `spans/s wall (${r.spans} spans)`,
      value: Math.round(r.spans / (r.wallMs / 1000)),
      unit: 'spans/s',
    },
    { suite: 'calibrate', name: `peak RSS (${r.spans} spans)`, value: Math.round(r.peakRssMb), unit: 'MB' },
  ]);
}
