import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { captureIo, cli, tempDir } from './capture-io.js';

/** Two layers against a fast healthy model: a few hundred ms of traffic is over soon after. */
const SCENARIO = `
name: live-smoke
duration: 1s
drain: 10s
arrival: { type: constant, rate: 20 }
tokens: { prompt: 50, completion: 10 }
layers:
  - { name: agent, fanout: 2, retry: { policy: naive, attempts: 2 } }
  - { name: llm, retry: { policy: naive, attempts: 2 } }
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 20ms, tpot: 0 }
live: { connections: 16 }
`;

/** The same with half the requests answered 503, for as long as any run lasts. */
const FAULTY = SCENARIO.replace(
  'upstream:\n  models:',
  'upstream:\n  faults: [{ kind: errors, from: 0s, to: 10m, rate: 0.5, status: 503 }]\n  models:',
);

const dir = tempDir({ 'smoke.yaml': SCENARIO, 'faulty.yaml': FAULTY });
const smoke = join(dir, 'smoke.yaml');
const faulty = join(dir, 'faulty.yaml');

/** Plain progress lines only on stderr (and the notes asked for). */
function progressOnly(err: string): string[] {
  return err.split('\n').filter((l) => l !== '' && !/^\[ *[\d.]+m?s\/[\d.]+m?s +\d+%\] /.test(l));
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('stormlab run --mode live', () => {
  it('runs end to end against an in-process fake upstream and writes a live result', async () => {
    const r = await cli(['run', smoke, '--mode', 'live', '--duration', '2s', '--no-ui', '--json', 'out.json']);
    expect(progressOnly(r.err)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^amplification 1\.00× · goodput [\d.]+\/s · success 100\.0 %\n/);
    expect(r.out).toContain('live-smoke · seed 1 · live');
    const json = JSON.parse(r.files.get('out.json')!);
    expect(json).toMatchObject({ schema: 'stormlab.result/v1', scenario: 'live-smoke', mode: 'live' });
    expect(json.variants).toHaveLength(1);
    const v = json.variants[0];
    expect(v).toMatchObject({
      name: 'live-smoke',
      durationMs: 2000,
      amplification: 1,
      successRate: 1,
      roots: { offered: 40, ok: 40 },
    });
    expect(v.upstream.status).toEqual({ 200: 80 });
    expect(v.live).toMatchObject({ poolConnections: 16, requestErrors: 0 });
  });

  it('compare --mode live runs the variants one after the other; --connections overrides the scenario', async () => {
    const r = await cli([
      'compare',
      faulty,
      '--mode',
      'live',
      '--no-ui',
      '--connections',
      '8',
      '--json',
      'out.json',
      '-q',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.files.get('out.json')!);
    expect(json.mode).toBe('live');
    expect(json.variants.map((v: { name: string }) => v.name)).toEqual(['naive', 'engine']);
    for (const v of json.variants) {
      expect(v.live.poolConnections).toBe(8);
      expect(v.roots.offered).toBe(20);
      expect(v.upstream.status['503']).toBeGreaterThan(0); // each variant met the fault of its own fresh upstream
    }
    expect(json.timing.variants.map((v: { name: string }) => v.name)).toEqual(['naive', 'engine']);
  });

  it("--target sends to the given endpoint with every --header, and says the scenario's faults are not injected there", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ usage: { total_tokens: 60 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await cli([
      'run',
      faulty,
      '--mode',
      'live',
      '--target',
      url,
      '--header',
      'Authorization: Bearer sk-test',
      '--header',
      'x-team:storm',
      '--no-ui',
      '--json',
      'out.json',
      '-q',
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      `note: the scenario's fault phases are not injected into ${url}; give --upstream (the stormlab serve behind it) to inject them there\n`,
    );
    expect(seen).toHaveLength(40);
    expect(seen[0]).toMatchObject({ authorization: 'Bearer sk-test', 'x-team': 'storm' });
    const v = JSON.parse(r.files.get('out.json')!).variants[0];
    expect(v).toMatchObject({ successRate: 1, upstream: { status: { 200: 40 }, tokensServed: 2400 } });
  });

  it('a target that refuses every connection never answered: exit 4, one line, no summary', async () => {
    const r = await cli([
      'run',
      smoke,
      '--mode',
      'live',
      '--target',
      'http://127.0.0.1:1',
      '--no-ui',
      '--set',
      'layers[*].retry={policy: none}',
      '-q',
    ]);
    expect(r.code).toBe(4);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      'stormlab: --target http://127.0.0.1:1 never answered: 40 requests got no HTTP answer (ECONNREFUSED ×40); is it running, at that address?\n',
    );
  });

  it('SIGINT stops a plain live run cleanly and still writes the partial result', async () => {
    const io = captureIo();
    let stop: ((signal: string) => void) | undefined;
    let forgotten = false;
    io.onStop = (fn) => {
      stop = fn;
      return () => void (forgotten = true);
    };
    const write = io.stderr;
    io.stderr = (t) => {
      write(t);
      if (t.startsWith('[')) stop?.('SIGINT'); // at the first progress line, a second in
    };
    const code = await createProgram(io).run([
      'run',
      smoke,
      '--mode',
      'live',
      '--duration',
      '10s',
      '--no-ui',
      '--json',
      'out.json',
    ]);
    expect(code).toBe(130); // 128 + SIGINT, as a shell reports it
    expect(forgotten).toBe(true);
    expect(io.err).toMatch(/stopped at [\d.]+m?s of 10s: the result below is partial\n$/);
    const file = JSON.parse(io.files.get('out.json')!);
    expect(file.partial).toBe(true);
    const v = file.variants[0];
    expect(v.durationMs).toBeLessThan(5_000);
    expect(v.roots.offered).toBeGreaterThan(0);
    expect(v.roots.offered).toBeLessThan(100);
  });

  it.each([
    [['--mode', 'fast'], '--mode: expected sim or live, got "fast"'],
    [['--target', 'http://x'], '--target: only with --mode live'],
    [['--connections', '4'], '--connections: only with --mode live'],
    [['--upstream', 'http://x'], '--upstream: only with --mode live'],
    [
      ['--mode', 'live', '--upstream', 'http://127.0.0.1:1'],
      '--upstream: only with --target (the gateway in front of it); without --target the fake upstream runs in-process',
    ],
    [['--mode', 'live', '--speed', '10x'], '--speed: a live run goes at real time; --speed is for simulated runs'],
    [['--settle-quiet', '1s'], '--settle-quiet: only with --mode live'],
    [
      ['--mode', 'live', '--target', 'http://127.0.0.1:1', '--settle-timeout', '1s'],
      '--settle-timeout: only with --upstream (hop 2 is read from the upstream behind the gateway)',
    ],
    [
      ['--mode', 'live', '--target', 'http://127.0.0.1:1', '--upstream', 'http://127.0.0.1:2', '--settle-quiet', '5'],
      '--settle-quiet: expected a duration with a unit, like 5s or 500ms, got "5"',
    ],
    [
      [
        '--mode',
        'live',
        '--target',
        'http://127.0.0.1:1',
        '--upstream',
        'http://127.0.0.1:2',
        '--settle-timeout',
        'soon',
      ],
      '--settle-timeout: expected a duration with a unit, like 5s or 500ms, got "soon"',
    ],
    [
      ['--mode', 'live', '--target', 'http://127.0.0.1:1', '--upstream', 'http://127.0.0.1:2', '--settle-quiet', '90s'],
      '--settle-quiet 1.5m is longer than --settle-timeout 1m: the wait could only time out',
    ],
    [['--mode', 'live', '--header', 'no colon'], `--header: expected 'Name: value', got "no colon"`],
    [['--mode', 'live', '--connections', '0'], '--connections: expected a positive integer, got "0"'],
    [
      ['--mode', 'live', '--target', 'localhost:8080'],
      '--target: expected an http(s) URL like http://localhost:8080, got "localhost:8080"',
    ],
  ])('%j is a usage error: one line, exit 2', async (flags, message) => {
    const r = await cli(['run', smoke, ...flags, '--no-ui']);
    expect(r.err).toBe(`stormlab: ${message}\n`);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
  });

  it("a scenario's live.connections is checked like any field", async () => {
    const d = tempDir({ 'bad.yaml': SCENARIO.replace('connections: 16', 'connections: -1') });
    const r = await cli(['run', join(d, 'bad.yaml'), '--mode', 'live', '--no-ui']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/live\.connections: expected a positive integer, got -1/);
  });
});
