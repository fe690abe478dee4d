/**
 * Small timing helpers for the benchmarks: run a body in batches, keep the median batch.
 * Medians over several batches resist the noise of a shared machine better than one long run.
 */
export interface Row {
  suite: string;
  name: string;
  value: number;
  unit: string;
}

const now = (): bigint => process.hrtime.bigint();

/** ns per call of a synchronous body, median of `rounds` batches of `n` calls. */
export function timeSync(body: (i: number) => unknown, n = 2_000_000, rounds = 7): number {
  let sink = 0;
  for (let i = 0; i < n; i++) if (body(i)) sink++; // warm-up
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = now();
    for (let i = 0; i < n; i++) if (body(i)) sink++;
    samples.push(Number(now() - t0) / n);
  }
  if (sink < 0) console.log(sink);
  return median(samples);
}

/** ns per awaited call of an async body, median of `rounds` batches of `n` sequential awaits. */
export async function timeAsync(body: () => Promise<unknown>, n = 300_000, rounds = 7): Promise<number> {
  for (let i = 0; i < n; i++) await body();
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = now();
    for (let i = 0; i < n; i++) await body();
    samples.push(Number(now() - t0) / n);
  }
  return median(samples);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Prints rows as an aligned table. */
export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const cell = (v: string | number): string => (typeof v === 'number' ? fmt(v) : v);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  console.log(`\n${title}`);
  console.log(cols.map((c, i) => c.padEnd(width[i])).join('  '));
  console.log(width.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows)
    console.log(
      cols
        .map((c, i) => (typeof r[c] === 'number' ? cell(r[c]).padStart(width[i]) : cell(r[c]).padEnd(width[i])))
        .join('  '),
    );
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
