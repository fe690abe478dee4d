import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, type Row } from './measure.js';

const CHILD = fileURLToPath(new URL('./calibrate-child.ts', import.meta.url));

interface ChildRun {
  spans: number;
  roots: number;
  bytes: number;
  wallMs: number;
  cpuMs: number;
  wholeCpuMs: number;
  wholeWallMs: number;
  peakOpenTraces: number;
  peakSpansHeld: number;
  rssBeforeMb: number;
  peakRssFitMb: number;
  peakRssMb: number;
}

/**
 * The old generation a calibration runs in: both sizes in the same 64 MB (Node's default is
 * about 2 GB on this machine), so a run whose memory grew with the spans would fail, not just peak higher.
 */
export const CALIBRATE_OLD_SPACE_MB = 64;

function child(node: string[], ...args: string[]): Record<string, number> {
  const out = execFileSync(process.execPath, [...node, '--import', 'tsx', CHILD, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

/** Writes `roots` root tasks of traces in one child, calibrates them in another. */
function run(roots: number): ChildRun {
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-calibrate-bench-'));
  try {
    const file = join(dir, 'traces.jsonl');
    const { bytes } = child([], 'write', String(roots), file);
    return {
      ...(child([`--max-old-space-size=${CALIBRATE_OLD_SPACE_MB}`], 'read', file) as unknown as ChildRun),
      bytes,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `stormlab calibrate` on ~100k and ~1M spans of synthetic multi-agent traces (JSON Lines, ~440
 * bytes a span), written by one child process and read by another (so its peak RSS is
 * calibrate's alone): spans per second of CPU time (the steadier figure on a shared machine;
 * wall time beside it) of reading and fitting (`observe` + `derive`), of the whole command
 * (plus the fit report's simulation), and peak RSS. Memory is flat: both run in a 64 MB old
 * generation (`CALIBRATE_OLD_SPACE_MB`), and the 1M-span run peaks where the 100k one does: what
 * is held is the traces open at once (a rate × the 60 s grace), not the file.
 */
export async function calibrateSuite(): Promise<Row[]> {
  const runs = [5_000, 50_000].map(run);
  printTable(
    `calibrate: OTLP JSON Lines read + fitted (observe + derive), and the whole of calibrate (+ the fit simulation); old generation capped at ${CALIBRATE_OLD_SPACE_MB} MB`,
    runs.map((r) => ({
      spans: r.spans,
      MB: r.bytes / 1e6,
      'spans/s (cpu)': Math.round(r.spans / (r.cpuMs / 1000)),
      'spans/s (wall)': Math.round(r.spans / (r.wallMs / 1000)),
      'whole: spans/s (cpu)': Math.round(r.spans / (r.wholeCpuMs / 1000)),
      'open traces (peak)': r.peakOpenTraces,
      'spans held (peak)': r.peakSpansHeld,
      'RSS before MB': Math.round(r.rssBeforeMb),
      'peak RSS MB (read+fit)': Math.round(r.peakRssFitMb),
      'peak RSS MB (whole)': Math.round(r.peakRssMb),
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
    {
      suite: 'calibrate',
      name: `whole calibrate spans/s cpu (${r.spans} spans)`,
      value: Math.round(r.spans / (r.wholeCpuMs / 1000)),
      unit: 'spans/s',
    },
    { suite: 'calibrate', name: `peak RSS read+fit (${r.spans} spans)`, value: Math.round(r.peakRssFitMb), unit: 'MB' },
    { suite: 'calibrate', name: `peak RSS (${r.spans} spans)`, value: Math.round(r.peakRssMb), unit: 'MB' },
  ]);
}
