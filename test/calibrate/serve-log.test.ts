import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibrate } from '../../src/calibrate/calibrate.js';
import type { FitReport } from '../../src/calibrate/fit-report.js';
import { cli, tempDir } from '../cli/capture-io.js';
import { fixtureTraces } from './otlp-fixture.js';

type Json = Record<string, any>;

/**
 * The fixture's traces and the `serve --log` lines its HTTP attempts would have given, plus
 * `resets` requests the server answered with nothing (status 0) that the traces never saw.
 */
function run(resets: number) {
  const { lines } = fixtureTraces({ roots: 80, rate: 5, failRate: 0.3, failFrom: 4000, failTo: 10_000 });
  const log: string[] = [];
  for (const l of lines)
    for (const r of JSON.parse(l).resourceSpans)
      for (const sc of r.scopeSpans)
        for (const sp of sc.spans as Json[]) {
          if (sp.name !== 'POST') continue;
          const status = Number(sp.attributes.find((a: Json) => a.key === 'http.response.status_code').value.intValue);
          const start = Number(BigInt(sp.startTimeUnixNano) / 1_000_000n);
          const latencyMs = Number(BigInt(sp.endTimeUnixNano) / 1_000_000n) - start;
          log.push(
            JSON.stringify({
              time: new Date(start).toISOString(),
              method: 'POST',
              route: '/v1/chat/completions',
              model: 'gpt-4o-mini',
              retryCount: null,
              stream: false,
              status,
              fault: status === 200 ? null : 'Fault',
              latencyMs: Math.max(0, latencyMs - 15),
            }),
          );
        }
  const at = JSON.parse(log[0]).time;
  for (let k = 0; k < resets; k++)
    log.push(
      JSON.stringify({ time: at, route: '/v1/chat/completions', model: 'gpt-4o-mini', status: 0, latencyMs: 3 }),
    );
  log.push(
    JSON.stringify({ time: at, route: '/v1/embeddings', model: 'text-embedding-3-small', status: 200, latencyMs: 5 }),
  );
  return tempDir({ 'traces.jsonl': `${lines.join('\n')}\n`, 'serve.jsonl': `${log.join('\n')}\n` });
}

const share = (r: FitReport, metric: string) => r.rows.find((x) => x.layer === 'upstream' && x.metric === metric)!;

describe('calibrate --serve-log: the upstream as the server saw it', () => {
  it("takes the error mix from the server's statuses, its resets included, and says the server's latency", () => {
    const dir = run(40);
    const t = [{ path: join(dir, 'traces.jsonl'), label: 'traces.jsonl' }];
    const plain = calibrate(t);
    const c = calibrate(t, { serveLogs: [{ path: join(dir, 'serve.jsonl'), label: 'serve.jsonl' }] });
    // The traces saw no reset; the server answered 40 requests with nothing.
    expect(share(plain.report, 'share no status').observed).toBe(0);
    const attempts = plain.obs.leaf.attempts;
    expect(share(c.report, 'share no status').observed).toBeCloseTo(40 / (attempts + 40), 4);
    expect(c.text).toMatch(/# the upstream's errors from serve\.jsonl \(stormlab serve --log: \d+ requests\)/);
    expect(c.draft.fits.join('\n')).toMatch(
      new RegExp(`the server's own statuses of ${attempts + 40} requests \\(the traces had ${attempts} attempts\\)`),
    );
    expect(c.draft.fits.join('\n')).toMatch(
      /model gpt-4o-mini: at the server p50 [\d.]+ ms, .* the 1[5-6](\.\d)? ms between/,
    );
    expect(c.draft.notes.join('\n')).toMatch(/requests for text-embedding-3-small \(a model no trace called\)/);
    expect(c.draft.notes.join('\n')).toMatch(
      /no answer written: a reset, or the client gone first\): simulated as 503/,
    );
  });

  it('refuses a file that is not a serve log in one line, exit 2, nothing written', async () => {
    const dir = run(0);
    for (const [text, line] of [
      [
        '{"time": "2025-01-01T00:00:00Z", "status": 200}\n',
        /^stormlab: bad\.jsonl:1: not a stormlab serve --log line \(no latencyMs\)/,
      ],
      ['hello\n', /^stormlab: bad\.jsonl:1: not a stormlab serve --log line \(not JSON\)/],
      ['{"resourceSpans": []}\n', /^stormlab: bad\.jsonl:1: OTLP traces, not a serve log/],
      ['\n', /^stormlab: bad\.jsonl: empty file, no requests in it$/m],
    ] as const) {
      const cwd = tempDir({
        'traces.jsonl': (await import('node:fs')).readFileSync(join(dir, 'traces.jsonl'), 'utf8'),
        'bad.jsonl': text,
      });
      const r = await cli(['calibrate', 'traces.jsonl', '--serve-log', 'bad.jsonl', '-o', 'out.yaml'], { cwd });
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(line);
      expect(r.files.get('out.yaml')).toBeUndefined();
    }
  });
});
