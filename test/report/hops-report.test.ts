import { describe, expect, it } from 'vitest';
import { resultFileSchema } from '../../src/report/result-schema.js';
import { hopNotes } from '../../src/report/hop-notes.js';
import { withNotes } from '../../src/report/result-notes.js';
import { resultReport } from '../../src/report/html/result-report.js';
import { summaryTable } from '../../src/report/summary-table.js';
import { progressLine } from '../../src/report/progress-line.js';
import type { RunResult, UpstreamHop } from '../../src/run/metrics/result.js';
import type { HopView } from '../../src/run/run-view.js';
import { upstreamLines } from '../../src/ui/UpstreamPanel.js';
import { headerLines } from '../../src/ui/Header.js';
import type { Line } from '../../src/ui/line.js';
import { fakeFile, fakeRun } from './fixture.js';
import { frame, naiveView } from '../ui/fixture.js';

/** A gateway that tried each request 3 times against a full outage: 100 roots × 3 tries at hop 1, × 3 at hop 2. */
function hop(o: Partial<UpstreamHop> = {}): UpstreamHop {
  return {
    sent: 300,
    reached: 900,
    amplification: 3,
    totalAmplification: 9,
    status: { 503: 900 },
    routes: [{ route: '/v1/chat/completions', requests: 900, status: { 503: 900 } }],
    tokensServed: 0,
    wastedTokens: 0,
    noLengthHeader: 0,
    lengthsAsAsked: true,
    settle: {
      settled: true,
      outcome: 'quiet',
      quietMs: 5000,
      timeoutMs: 60_000,
      waitedMs: 5210,
      inFlight: 0,
      afterEnd: 12,
    },
    ...o,
  };
}

function gatewayRun(name: string, h: UpstreamHop = hop()): RunResult {
  const r = fakeRun(name, { roots: 100, leafAttempts: 3, okShare: 0 });
  return {
    ...r,
    live: { poolConnections: 16, maxPending: 0, meanPending: 0, requestErrors: 0, upstream: h },
  };
}

const lineText = (l: Line): string => l.map((s) => s.text).join('');

describe('the two hops in the summary', () => {
  it('labels each hop, heads with the total, and shows the statuses each side sent', () => {
    const out = summaryTable(fakeFile([gatewayRun('gw')]));
    expect(out.split('\n')[0]).toBe('amplification hop 1 3.00× · hop 2 3.00× · total 9.00× · goodput 0.00/s');
    expect(out).toMatch(/^total amplification +9\.00×$/m);
    expect(out).not.toMatch(/^amplification +3\.00×$/m);
    expect(out).toMatch(
      /^hop 1 · driver → gateway\n {2}attempts +300\n {2}amplification +3\.00×\n {2}429 share .*\n {2}5xx share .*\n {2}timeout share .*\n {2}status 429 +\d+\n {2}status 529 +\d+\n/m,
    );
    expect(out).toMatch(
      /^hop 2 · gateway → upstream\n {2}requests +900\n {2}amplification +3\.00×\n {2}status 503 +900\n {2}wasted tokens +0\n {2}settled +after 5\.21 s\n {2}requests after stop +12$/m,
    );
    expect(out).not.toContain('note:');
  });

  it('compare: the total heads each variant; a variant run without a gateway shows dashes', () => {
    const out = summaryTable(fakeFile([gatewayRun('naive'), gatewayRun('engine', hop({ totalAmplification: 1.2 }))]));
    expect(out.split('\n')[0]).toBe('total amplification naive 9.00× · engine 1.20×');
  });

  it('notes in one line each what a reader must not miss', () => {
    const unsettled = gatewayRun(
      'gw',
      hop({
        settle: {
          settled: false,
          outcome: 'timeout',
          quietMs: 5000,
          timeoutMs: 60_000,
          waitedMs: 60_000,
          inFlight: 3,
          afterEnd: 40,
        },
        noLengthHeader: 900,
        lengthsAsAsked: false,
        status: { 200: 324, 503: 573, inFlight: 3 },
      }),
    );
    expect(hopNotes([unsettled])).toEqual([
      {
        kind: 'hop-unsettled',
        variant: 'gw',
        outcome: 'timeout',
        inFlight: 3,
        message:
          'gw: hop 2 was read before the upstream settled (--settle-timeout 1m ran out with 3 in flight there): its figures may be short',
      },
      {
        kind: 'length-header',
        variant: 'gw',
        requests: 900,
        of: 900,
        lengthsAsAsked: false,
        message:
          "gw: 900 of 900 requests reached the upstream without x-stormlab-output-tokens (the gateway does not pass it on): their lengths are the upstream's own, so token figures are as measured, not the scenario's",
      },
      {
        kind: 'successes-lost',
        variant: 'gw',
        upstream: 324,
        driver: 0,
        message:
          'gw: the upstream answered the gateway 324 200s, the gateway the driver 0: 324 successes never reached the driver (turned into errors, answered after it gave up, or hedged)',
      },
    ]);
    // The file's notes carry them (with the run's own), and the summary prints their lines.
    const file = withNotes(fakeFile([unsettled]), { drainMs: {} });
    expect(file.notes?.map((n) => n.kind)).toEqual(['hop-unsettled', 'length-header', 'successes-lost']);
    const out = summaryTable(file);
    expect(out).toMatch(/^ {2}settled +no \(1m out\)$/m);
    expect(out).toMatch(/^ {2}status inFlight +3$/m);
    expect(out).toContain('note: gw: hop 2 was read before the upstream settled');
    // Attempts the driver gave up on before they left (the pool starved): the gateway never saw them.
    expect(hopNotes([gatewayRun('gw', hop({ sent: 290, reached: 870 }))])).toEqual([
      {
        kind: 'hop-unsent',
        variant: 'gw',
        attempts: 300,
        sent: 290,
        message:
          "gw: 10 of the driver's 300 attempts were given up on before they reached the gateway (waiting for a connection: raise --connections); hop 2 is per request the gateway got, so hop 1 × hop 2 exceeds the total",
      },
    ]);
    const skipped = hop({ settle: { ...hop().settle, settled: false, outcome: 'skipped' } });
    expect(hopNotes([gatewayRun('a', skipped), gatewayRun('b')]).map((n) => n.message)).toEqual([
      'a: hop 2 was read before the upstream settled (the run was stopped): its figures may be short',
    ]);
  });

  it('the HTML report has the two hops side by side, the total first, and the same notes', () => {
    const page = resultReport(withNotes(fakeFile([gatewayRun('gw', hop({ noLengthHeader: 900 }))]), { drainMs: {} }));
    expect(page.body).toContain('<h2>Two hops</h2>');
    expect(page.body).toContain('<th>total amplification</th><th>hop 1 amplification</th>');
    expect(page.body).toContain('<td>gw</td><td>9.00×</td><td>3.00×</td><td>3.00×</td><td>300</td><td>900</td>');
    expect(page.body).toContain('<td>503 900</td><td>33.3 %</td><td>after 5.21 s</td><td>12</td>');
    expect(page.body).toContain('gw: 900 of 900 requests reached the upstream without x-stormlab-output-tokens');
    expect(page.body).not.toContain('<th>wasted tokens</th>');
    expect(resultReport(fakeFile([fakeRun('plain', { roots: 10, leafAttempts: 1, okShare: 1 })])).body).not.toContain(
      'Two hops',
    );
  });

  it('reads back a file written before hop 2 settled (no total, no settle) and shows no hops for it', () => {
    const old = gatewayRun('gw');
    const { totalAmplification: _t, settle: _s, routes: _r, ...before } = old.live!.upstream!;
    const file = fakeFile([{ ...old, live: { ...old.live!, upstream: before as UpstreamHop } }]);
    expect(resultFileSchema.safeParse(JSON.parse(JSON.stringify(file))).success).toBe(true);
    expect(summaryTable(file)).not.toContain('hop 2');
    const bad = JSON.parse(JSON.stringify(fakeFile([gatewayRun('gw')])));
    bad.variants[0].live.upstream.settle.outcome = 'maybe';
    expect(resultFileSchema.safeParse(bad).success).toBe(false);
  });
});

describe('the two hops while a run goes', () => {
  const hops = (o: Partial<HopView> = {}): HopView => ({
    sent: 27_604,
    reached: 82_812,
    status: { 503: 82_800, inFlight: 12 },
    inFlight: 12,
    busy: 12,
    queued: 0,
    ...o,
  });

  it('--no-ui progress lines: hop 1 labelled, hop 2 and the total, and settling', () => {
    const line = progressLine(frame([{ ...naiveView(), hops: hops() }]));
    expect(line).toContain('naive hop 1 14.2× (last 5s 27.0×)');
    expect(line).toMatch(/ · hop 2 3\.00× \(82\.8k reached\) · total 42\.6×$/);
    const settling = hops({ settling: { waitedMs: 1200, quietForMs: 300, quietMs: 5000, timeoutMs: 60_000 } });
    expect(progressLine(frame([{ ...naiveView(), hops: settling }]))).toMatch(/ · settling 1\.2s \(12 in flight\)$/);
  });

  it('the dashboard: hop 1 and hop 2 under their names, the total, and the settle while it lasts', () => {
    const view = {
      ...naiveView(),
      hops: hops({ settling: { waitedMs: 1200, quietForMs: 300, quietMs: 5000, timeoutMs: 60_000 } }),
    };
    const text = upstreamLines(view, 80).map(lineText);
    expect(text[0]).toMatch(/^hop 1 · driver → gateway · 60 s/);
    expect(text).toContain('hop 2 · gateway → upstream  82.8k reached  ✗ 3.00×  total ✗ 42.6×');
    expect(text).toContain('503 82.8k  in flight 12  busy 12  queue 0');
    expect(text).toContain('settling 1.2s · quiet 0.3s of 5.0s (at most 60.0s)');
    const header = headerLines(frame([view]), 120)
      .map(lineText)
      .join('\n');
    expect(header).toContain('amplification hop 1 ✗ 14.2× · hop 2 ✗ 3.00× · total ✗ 42.6×');
    expect(header).toContain('▶ settling hop 2');
    // Without a gateway under test, nothing of this.
    expect(upstreamLines(naiveView(), 80).map(lineText)[0]).toMatch(/^upstream · 60 s/);
  });
});
