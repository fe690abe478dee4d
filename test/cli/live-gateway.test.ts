import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../../src/fake-upstream/server.js';
import { createProgram } from '../../src/cli/program.js';
import { scriptedGateway } from '../helpers/scripted-gateway.js';
import { expectSecondHop, healthyModel, runTwoHops, twoHopScenario } from '../helpers/two-hop-run.js';
import { captureIo, cli } from './capture-io.js';

const scenario = twoHopScenario();

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The fake upstream a user would start as `stormlab serve`, healthy until the harness injects faults. */
async function upstream(): Promise<FakeUpstream> {
  const fake = await healthyModel();
  closers.push(() => fake.close());
  return fake;
}

/** A small gateway: forwards each request to `to`, retrying a 5xx or 429 up to `attempts` times, at once. */
async function retryingGateway(to: string, attempts: number) {
  const gw = await scriptedGateway({ upstream: to, attempts, backoffMs: 0 });
  closers.push(() => gw.close());
  return gw;
}

describe('stormlab run --mode live --target <gateway> --upstream <stormlab serve>', () => {
  it("injects the scenario's faults behind the gateway and measures the gateway's own amplification", async () => {
    const fake = await upstream();
    const gw = await retryingGateway(fake.url, 3);
    const r = await runTwoHops(scenario, gw.url, fake.url);
    expect(r.code).toBe(0);
    const v = r.variant;
    expect(v.upstream.attempts).toBe(30);
    // The second hop: what the gateway did, as the upstream counted it; half of the forwarded
    // requests failed, so the gateway retried (3 attempts: at most 3×).
    expectSecondHop(v, gw.counts);
    expect(v.live.upstream.reached).toBeLessThanOrEqual(90);
    // The summary shows both hops; the upstream has its own (no) faults back.
    expect(r.out).toMatch(/^hop 2 · gateway → upstream\n {2}requests +[\d,]+\n {2}amplification +[\d.]+×$/m);
    expect(r.out).toMatch(/^total amplification +[\d.]+×$/m);
    expect(fake.faults()).toEqual([]);
    expect(r.err).not.toContain('not injected');
  });

  it('a gateway that does not retry measures 1.00× behind it, whatever the faults', async () => {
    const fake = await upstream();
    const gw = await retryingGateway(fake.url, 1);
    const r = await cli([
      'run',
      scenario,
      '--mode',
      'live',
      '--target',
      gw.url,
      '--upstream',
      fake.url,
      '--settle-quiet',
      '100ms',
      '--no-ui',
    ]);
    expect(r.code).toBe(0);
    expect(gw.counts.forwarded).toBe(30);
    expect(r.out).toMatch(/^amplification hop 1 1\.00× · hop 2 1\.00× · total 1\.00×/);
  });

  it('--upstream that is not a stormlab serve is a usage error before any traffic', async () => {
    const gw = await retryingGateway('http://127.0.0.1:1', 1);
    const notStormlab = await listen(
      createServer((_req, res) => {
        res.writeHead(404);
        res.end('no');
      }),
    );
    const r = await cli([
      'run',
      scenario,
      '--mode',
      'live',
      '--target',
      gw.url,
      '--upstream',
      notStormlab,
      '--no-ui',
      '-q',
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `stormlab: --upstream ${notStormlab}: GET /_stormlab/stats answered 404 (not a stormlab serve?)\n`,
    );
    expect(gw.counts.received).toBe(0);
  });
});

describe('gateway mode: what the io hears', () => {
  it("a crash of the process puts the upstream's own faults back (the cleanup it registers), even mid-run", async () => {
    const fake = await upstream();
    const own = fake.setFaults([{ kind: 'latency', fromMs: 3_600_000, factor: 2 }], 'start');
    const gw = await retryingGateway(fake.url, 1);
    const io = captureIo();
    let crash: (() => Promise<unknown>) | undefined;
    let forgotten = false;
    io.onCrash = (cleanup) => {
      crash = cleanup;
      return () => void (forgotten = true);
    };
    let stop: ((signal: string) => void) | undefined;
    io.onStop = (fn) => {
      stop = fn;
      return () => {};
    };
    let restoredMidRun: unknown;
    const write = io.stderr;
    io.stderr = (t) => {
      write(t);
      if (!t.startsWith('[') || crash === undefined || restoredMidRun !== undefined) return;
      restoredMidRun = 'pending';
      // As the process would on an uncaught error: the cleanups, then (here) a stop.
      void crash().then(() => {
        restoredMidRun = fake.faults();
        stop?.('SIGTERM');
      });
    };
    const argv = [
      'run',
      scenario,
      '--mode',
      'live',
      '--duration',
      '10s',
      '--target',
      gw.url,
      '--upstream',
      fake.url,
      '--no-ui',
    ];
    const code = await createProgram(io).run(argv);
    expect(code).toBe(143);
    expect(restoredMidRun).toEqual(own);
    expect(forgotten).toBe(true);
  });
});

describe('a target that refuses most requests', () => {
  it('stops the run with one line naming what it answered, exit 2', async () => {
    let received = 0;
    const url = await listen(
      createServer((req, res) => {
        received++;
        req.resume();
        req.on('end', () => {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'Unknown request URL: POST /v1/chat/completions.' } }));
        });
      }),
    );
    const r = await cli(['run', scenario, '--mode', 'live', '--target', url, '--no-ui', '-q', '--json', 'out.json']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.files.has('out.json')).toBe(false);
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect(lines).toEqual([
      expect.stringMatching(/^note: the scenario's fault phases are not injected into /),
      expect.stringMatching(
        new RegExp(
          `^stormlab: --target ${url}: 2\\d of the first 2\\d answers were 4xx refusals \\(first: 404 "Unknown request URL: POST /v1/chat/completions\\."\\); check the URL and its path, the model names, and auth \\(--header\\)$`,
        ),
      ),
    ]);
    // Stopped early: not the whole second of traffic.
    expect(received).toBeLessThan(30);
  });

  it('429s are the upstream saying "later", not a refusal: the run goes on', async () => {
    const url = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '1' });
          res.end(JSON.stringify({ error: { type: 'requests', message: 'Rate limit reached' } }));
        });
      }),
    );
    const r = await cli(['run', scenario, '--mode', 'live', '--target', url, '--no-ui', '-q']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/success 0\.0 %/);
  });
});
