import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { SeededRandom } from '../../src/engine/random.js';
import { fleetKeys } from '../../src/explore/fleet-protocol.js';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import type { ResultFile } from '../../src/run/metrics/result.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { captureIo, tempDir } from '../cli/capture-io.js';
import { describeWithRedis, REDIS_URL, testPrefix, testRedis } from '../helpers/redis.js';
import { scriptedGateway } from '../helpers/scripted-gateway.js';

const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));

/** Open-loop arrivals (every share's roots are known before the run), one layer, no retries: attempts = requests. */
const SCENARIO = (duration: string) => `
name: fleet-test
seed: 29
duration: ${duration}
drain: 3s
arrival: { type: constant, rate: 40 }
tokens: { prompt: 50, completion: 8 }
layers:
  - name: llm
    retry: { policy: none }
    models: [primary]
upstream:
  models:
    - name: primary
      slots: 1000
      queue: 0
      ttft: 5ms
      tpot: 1ms
live:
  connections: 16
`;

/**
 * The engine on the one layer with a fleet-wide rate limit: 10 requests/s, burst 10. 50 roots/s
 * for 3 s, ~17/s per worker: a bucket of each worker's own would let ~40 of each worker's 50
 * through (~120 in all), the one bucket in Redis ~40 of the fleet's 150.
 */
const SHARED = `
name: fleet-shared
seed: 29
duration: 3s
drain: 3s
arrival: { type: constant, rate: 50 }
tokens: { prompt: 50, completion: 8 }
layers:
  - name: llm
    retry:
      policy: engine
      engine:
        limits:
          - { name: fleet_rps, unit: requests, rate: 10, per: second, burst: 10 }
    models: [primary]
upstream:
  models:
    - { name: primary, slots: 1000, queue: 0, ttft: 5ms, tpot: 1ms }
live:
  connections: 16
`;

/** A full outage behind a gateway that tries each request 3 times: hop 2 is 3× hop 1 (as in gateway-hops.slow.test.ts). */
const OUTAGE = `
name: fleet-outage
seed: 29
duration: 1s
drain: 10s
arrival: { type: constant, rate: 12 }
tokens: { prompt: 50, completion: 10 }
layers:
  - name: llm
    timeout: 100ms
    retry: { policy: naive, attempts: 3, backoff: { strategy: exponential, baseMs: 10, capMs: 10 } }
    models: [primary]
upstream:
  faults: [{ kind: outage, from: 0s, to: 10m, status: 503 }]
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 5ms, tpot: 0 }
live: { connections: 16 }
`;

const dir = tempDir({
  'fleet.yaml': SCENARIO('3s'),
  'long.yaml': SCENARIO('12s'),
  'shared.yaml': SHARED,
  'outage.yaml': OUTAGE,
});

/** A `stormlab worker` on the queue; resolves once it takes shares. */
function startWorker(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${log}`)), 30_000);
    child.stderr!.on('data', (d) => {
      log += String(d);
      if (log.includes('taking points')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${log}`)));
  });
}

/** `stormlab <argv>` in this process, with a stop (Ctrl-C) that `stopAfter` fires. */
async function coordinator(argv: string[], stopAfterMs?: number) {
  const io = captureIo({ cwd: dir, env: {} });
  let stop: ((s: string) => void) | undefined;
  io.onStop = (fn) => {
    stop = fn;
    return () => {
      stop = undefined;
    };
  };
  const timer = stopAfterMs === undefined ? undefined : setTimeout(() => stop?.('SIGINT'), stopAfterMs);
  const code = await createProgram(io).run(argv);
  clearTimeout(timer);
  const text = io.files.get(join(dir, 'out.json'));
  const file = text === undefined ? undefined : (JSON.parse(text) as ResultFile);
  return { code, out: io.out, err: io.err, file };
}

await describeWithRedis('a live run on a fleet of 3 worker processes', () => {
  const url = `${REDIS_URL}?queue=${testPrefix('fleet').replace(/[^\w.-]/g, '-')}`;
  let workers: ChildProcess[] = [];
  let fake: FakeUpstream;

  beforeAll(async () => {
    const scenario = loadScenario(join(dir, 'fleet.yaml'));
    fake = await createFakeUpstream({ upstream: scenario.upstream, port: 0, random: new SeededRandom(1) });
    workers = await Promise.all([startWorker(url), startWorker(url), startWorker(url)]);
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fake?.close();
  });

  const run = (file: string, extra: string[] = [], stopAfterMs?: number) =>
    coordinator(
      [
        'run',
        file,
        '--mode',
        'live',
        '--target',
        fake.url,
        '--queue',
        url,
        '--workers',
        '3',
        '--no-ui',
        '--json',
        join(dir, 'out.json'),
        ...extra,
      ],
      stopAfterMs,
    );

  it("merges the three shares exactly: counts are the sums of the workers', each drove its planned roots, the server saw them all", async () => {
    const before = fake.stats().models[0].attempts;
    const r = await run('fleet.yaml');
    expect(r.err).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const v = r.file!.variants[0];
    const ws = v.live!.workers!;
    expect(ws.map((w) => w.status)).toEqual(['reported', 'reported', 'reported']);
    expect(new Set(ws.map((w) => w.worker)).size).toBe(3);
    // 40/s for 3 s: 120 roots dealt one per block of 3, so 40 each; every planned root started.
    expect(ws.map((w) => w.plannedRoots)).toEqual([40, 40, 40]);
    expect(ws.map((w) => w.roots)).toEqual([40, 40, 40]);
    expect(v.roots.offered).toBe(ws.reduce((n, w) => n + w.roots, 0));
    expect(v.upstream.attempts).toBe(ws.reduce((n, w) => n + w.sent, 0));
    expect(fake.stats().models[0].attempts - before).toBe(v.upstream.attempts);
    expect(v.roots.ok + v.roots.failed + v.roots.late + v.roots.unfinished).toBe(120);
    // One ordinary result: the same shape as a single process's, plus who drove what.
    expect(v.layers[0].logicalCalls).toBe(120);
    expect(v.roots.latencyMs.p99).toBeGreaterThan(0);
    expect(v.live!.sharedState).toEqual({ store: 'none', shared: [], perWorker: [] });
    expect(r.out).toContain('fleet (who drove what');
    // No progress line at 0 % while the coordinator waited for its workers, and none past 100 %.
    expect(r.err).not.toMatch(/^\[ *0\.0s\/3\.0s +0%\]/m);
    expect(r.err).not.toMatch(/^\[ *(3\.[1-9]|[4-9]\.\d)s\/3\.0s/m);
    expect(r.err).toMatch(/^\[ *3\.0s\/3\.0s 100%\].* · done$/m);
  }, 120_000);

  it('the same seed and N give the same split, run after run', async () => {
    const a = (await run('fleet.yaml')).file!.variants[0].live!.workers!;
    const b = (await run('fleet.yaml')).file!.variants[0].live!.workers!;
    expect(a.map((w) => [w.share, w.plannedRoots, w.roots])).toEqual(b.map((w) => [w.share, w.plannedRoots, w.roots]));
  }, 120_000);

  // Its own queue and two workers of its own, asked for three. The race this once lost: a worker
  // counted down --fleet-wait itself from when it got its share, gave it up as the coordinator's
  // own wait ended, and took the third share, still counted ready for the first: the run started
  // with a share no one drove (exit 3). Now a worker waits while the coordinator is alive, and
  // takes its ready entry back when it gives a share up.
  it('refuses in one line, before starting, when fewer workers answer than asked', async () => {
    const own = `${REDIS_URL}?queue=${testPrefix('fleet-short').replace(/[^\w.-]/g, '-')}`;
    const two = await Promise.all([startWorker(own), startWorker(own)]);
    try {
      const before = fake.stats().models[0].attempts;
      const r = await coordinator([
        'run',
        'fleet.yaml',
        '--mode',
        'live',
        '--target',
        fake.url,
        '--queue',
        own,
        '--workers',
        '3',
        '--fleet-wait',
        '3s',
        '--no-ui',
      ]);
      expect(r.err).not.toMatch(/internal error/);
      expect(r.code).toBe(2);
      // Two, unless the machine is so loaded one of them had not taken its share within 3 s.
      expect(r.err).toMatch(
        /--workers 3: only [0-2] of 3 workers took a share on the queue .* within 3 s \(--fleet-wait\)/,
      );
      expect(
        r.err
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('stormlab:')).length,
      ).toBe(1);
      expect(fake.stats().models[0].attempts).toBe(before);
    } finally {
      for (const w of two) w.kill('SIGKILL');
    }
  }, 60_000);

  it('Ctrl-C on the coordinator stops every worker: a partial result of all three shares', async () => {
    const r = await run('long.yaml', [], 4000);
    expect(r.code).toBe(130);
    const v = r.file!.variants[0];
    const ws = v.live!.workers!;
    expect(ws.map((w) => w.status)).toEqual(['reported', 'reported', 'reported']);
    expect(ws.every((w) => w.interrupted)).toBe(true);
    expect(v.roots.offered).toBeLessThan(480);
    expect(r.file!.partial).toBe(true);
  }, 120_000);

  it('engine state is one across the fleet: a rate limit in Redis holds for all three workers, and the summary says what was shared', async () => {
    const before = fake.stats().models[0].attempts;
    const r = await run('shared.yaml');
    expect(r.err).not.toMatch(/internal error/);
    const v = r.file!.variants[0];
    expect(v.live!.workers!.map((w) => w.status)).toEqual(['reported', 'reported', 'reported']);
    expect(v.roots.offered).toBe(150);
    expect(v.live!.sharedState).toEqual({
      store: 'redis',
      shared: ['retryBudget', 'throttle', 'breakerCounts', 'limits'],
      perWorker: ['breakerState'],
    });
    expect(r.out).toMatch(/shared through Redis: .*; each worker's own: /);
    // One bucket of 10/s (burst 10) for 3 s: at most about 40 of the 150 get through (29 in one
    // run here), never the ~120 three buckets of each worker's own would let through.
    const sent = v.upstream.attempts;
    expect(fake.stats().models[0].attempts - before).toBe(sent);
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThan(80);
    expect(v.layers[0].shed.limit ?? 0).toBeGreaterThan(70);
  }, 120_000);

  it('hop 2 on a fleet: only the coordinator installs the faults, and reads hop 2 once every worker reported (3 × 3 = 9)', async () => {
    const upstream = await createFakeUpstream({
      upstream: { models: [{ name: 'primary', slots: 64, queue: 64, ttftMs: 5, tpotMs: 0 }] },
      port: 0,
    });
    const gw = await scriptedGateway({ upstream: upstream.url, attempts: 3, backoffMs: 250 });
    try {
      const r = await coordinator([
        'run',
        'outage.yaml',
        '--mode',
        'live',
        '--target',
        gw.url,
        '--upstream',
        upstream.url,
        '--settle-quiet',
        '600ms',
        '--queue',
        url,
        '--workers',
        '3',
        '--no-ui',
        '--json',
        join(dir, 'out.json'),
      ]);
      expect(r.err).not.toMatch(/internal error/);
      expect(r.code).toBe(0);
      const v = r.file!.variants[0];
      expect(v.live!.workers!.map((w) => w.status)).toEqual(['reported', 'reported', 'reported']);
      expect(v.live!.workers!.map((w) => w.plannedRoots)).toEqual([4, 4, 4]);
      // Hop 1: 12 roots, 3 tries each, every one timed out by its worker.
      expect(v.upstream.attempts).toBe(36);
      const hop = v.live!.upstream!;
      expect(hop.settle).toMatchObject({ settled: true, outcome: 'quiet' });
      expect(hop.sent).toBe(gw.counts.received);
      expect(hop.reached).toBe(gw.counts.forwarded);
      expect(hop.reached).toBe(108);
      expect(hop.status).toEqual({ 503: 108 });
      expect(hop.totalAmplification).toBe(9);
      expect(r.out).toMatch(/^amplification hop 1 3\.00× · hop 2 3\.00× · total 9\.00×/);
      // The upstream's own (no) faults are back.
      expect(upstream.faults()).toEqual([]);
    } finally {
      await gw.close();
      await upstream.close();
    }
  }, 120_000);

  it('a worker that starts late is named with its lag, and the run is whole', async () => {
    const redis = testRedis();
    const pids = new Set(workers.map((w) => w.pid));
    try {
      const pending = run('fleet.yaml');
      // Once all three hold a share, pause one of them (SIGSTOP) until well after the agreed start.
      let paused: { pid: number; share: number; run: string } | undefined;
      while (paused === undefined) {
        const [, keys] = await redis.scan('0', 'MATCH', 'stormlab:fleet:*:ready', 'COUNT', 1000);
        for (const key of keys) {
          const ready = await redis.hgetall(key);
          const ours = Object.entries(ready).filter(([, w]) => pids.has(Number(JSON.parse(w).worker.split(':')[1])));
          if (ours.length === 3) {
            const [share, w] = ours[0];
            paused = { pid: Number(JSON.parse(w).worker.split(':')[1]), share: Number(share), run: key.split(':')[2] };
          }
        }
        if (paused === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      process.kill(paused.pid, 'SIGSTOP');
      let start: string | null = null;
      while (start === null) {
        start = await redis.hget(fleetKeys(paused.run).control, 'start');
        if (start === null) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const [s, us] = await redis.time();
      const untilStart = Number(start) - (Number(s) * 1000 + Number(us) / 1000);
      // 800 ms past the agreed instant: late, and well inside the 5 s after which a worker is lost.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilStart) + 800));
      process.kill(paused.pid, 'SIGCONT');
      const r = await pending;
      expect(r.code).toBe(0);
      const ws = r.file!.variants[0].live!.workers!;
      expect(ws.map((w) => w.status)).toEqual(['reported', 'reported', 'reported']);
      const late = ws[paused.share];
      expect(late.startLagMs).toBeGreaterThanOrEqual(700);
      for (const w of ws) if (w !== late) expect(w.startLagMs).toBeLessThan(late.startLagMs);
      const note = r.file!.notes!.find((n) => n.kind === 'late-worker');
      expect(note?.message).toMatch(
        new RegExp(
          `share ${paused.share + 1} of 3 \\(.*:${paused.pid}:\\d+\\) started [\\d,]+ ms after the agreed instant`,
        ),
      );
      expect(r.file!.variants[0].roots.offered).toBe(120);
    } finally {
      for (const w of workers) if (w.pid !== undefined) process.kill(w.pid, 'SIGCONT');
      redis.disconnect();
    }
  }, 120_000);

  it('--allow-partial: a killed worker still names its lost share, and the run exits 0', async () => {
    const pending = run('long.yaml', ['--allow-partial']);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const victim = workers.pop()!;
    victim.kill('SIGKILL');
    const r = await pending;
    expect(r.code).toBe(0);
    const ws = r.file!.variants[0].live!.workers!;
    const lost = ws.filter((w) => w.status === 'lost');
    expect(lost.length).toBe(1);
    expect(r.file!.notes!.find((n) => n.kind === 'lost-share')?.message).toMatch(
      new RegExp(`share ${lost[0].share + 1} of 3 was lost .*160 intended root tasks`),
    );
    expect(r.out).toContain('was lost');
    workers.push(await startWorker(url));
  }, 120_000);

  it('a killed worker: the run ends with the others, names the lost share and its roots, exits 3', async () => {
    const pending = run('long.yaml');
    // Once they drive (the shares go out at once; the start is half a second later), kill one.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const victim = workers.pop()!;
    victim.kill('SIGKILL');
    const r = await pending;
    expect(r.code).toBe(3);
    const v = r.file!.variants[0];
    const ws = v.live!.workers!;
    const lost = ws.filter((w) => w.status === 'lost');
    expect(lost.length).toBe(1);
    expect(lost[0].plannedRoots).toBe(160);
    const reported = ws.filter((w) => w.status === 'reported');
    expect(v.roots.offered).toBe(reported.reduce((n, w) => n + w.roots, 0));
    const note = r.file!.notes!.find((n) => n.kind === 'lost-share');
    expect(note?.message).toMatch(new RegExp(`share ${lost[0].share + 1} of 3 was lost .*160 intended root tasks`));
    expect(r.out).toContain('was lost');
    // Back to three workers for whatever runs next.
    workers.push(await startWorker(url));
  }, 120_000);
});
