import { CONFORMANCE_TIMEOUTS, describeOutcome, runConformance } from './conformance-matrix.js';
import { printTable, type Row } from './measure.js';

/**
 * `npm run bench -- --suite conformance`: each LLM fault kind on the primary model of a fake
 * upstream × what `guardedFetch` in front of the official OpenAI SDK does about it (attempts per
 * model, time to answer, who answered, what the caller got). The README's conformance table.
 */
export async function conformanceSuite(): Promise<Row[]> {
  const results = await runConformance();
  const t = CONFORMANCE_TIMEOUTS;
  printTable(
    `conformance: one call per fault, primary gpt-4o, fallback gpt-4o-mini, long gpt-4o-long (timeouts: headers ${t.headersTimeoutMs} ms, stream headers ${t.stream.headersTimeoutMs} ms, first token ${t.stream.firstTokenMs} ms, idle ${t.stream.idleMs} ms, call ${t.timeoutMs} ms)`,
    results.map((r) => ({
      fault: r.name,
      call: r.stream ? 'stream' : 'json',
      primary: String(r.attempts.primary),
      fallback: String(r.attempts.fallback),
      long: String(r.attempts.long),
      'answer ms': String(Math.round(r.ms)),
      answered: r.target ?? '-',
      outcome: describeOutcome(r.outcome),
    })),
  );
  const rows: Row[] = [];
  for (const r of results) {
    const name = `${r.name} (${r.stream ? 'stream' : 'json'})`;
    rows.push(
      { suite: 'conformance', name: `${name} attempts primary`, value: r.attempts.primary, unit: 'attempts' },
      {
        suite: 'conformance',
        name: `${name} attempts fallback`,
        value: r.attempts.fallback + r.attempts.long,
        unit: 'attempts',
      },
      { suite: 'conformance', name: `${name} time to answer`, value: Math.round(r.ms), unit: 'ms' },
      {
        suite: 'conformance',
        name: `${name} truncated success`,
        value: r.outcome.kind === 'truncated' ? 1 : 0,
        unit: 'count',
      },
    );
  }
  return rows;
}
