import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseQueueUrl } from '../../src/explore/queue-target.js';
import type { SweepFile } from '../../src/report/sweep-file.js';
import { cli, tempDir } from '../cli/capture-io.js';
import { describeWithRedis, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { flakyScenario } from './flaky-scenario.js';

const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));
const dir = tempDir({ 'flaky.yaml': flakyScenario() });
const GRID = ['--param', 'engine.retryBudget.ratio=0.05,0.3', '--param', 'engine.throttle.k=1.5,3', '--seeds', '2'];

/** A `stormlab worker` process on the queue; resolves once it says it is taking points. */
function startWorker(url: string, extra: string[] = []): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', url, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${log}`)), 30_000);
    child.stderr!.on('data', (d) => {
      log += String(d);
      if (log.includes('taking points')) {
        clearTimeout(timer);
        resolve({ child, log: () => log });
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${log}`)));
  });
}

/** SIGTERM, then the exit code (bounded: a worker that hangs fails the test). */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not stop on SIGTERM')), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

describe('--queue: bad input', () => {
  it('reads redis URLs with a queue name, and refuses others in one line', async () => {
    expect(parseQueueUrl('redis://10.0.0.5:6380/2?queue=fleet-a')).toEqual({
      connection: { host: '10.0.0.5', port: 6380, db: 2 },
      name: 'fleet-a',
    });
    expect(parseQueueUrl('redis://127.0.0.1').name).toBe('stormlab-points');
    const r = await cli(['sweep', 'flaky.yaml', ...GRID, '--queue', 'http://x'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: --queue: expected a redis:// or rediss:// URL, got "http://x"\n');
    const w = await cli(['sweep', 'flaky.yaml', ...GRID, '--queue', 'redis://127.0.0.1', '--workers', '2'], {
      cwd: dir,
    });
    expect(w.code).toBe(2);
    expect(w.err).toMatch(/^stormlab: --workers: with --queue the points run on `stormlab worker` processes/);
  });
});

await describeWithRedis('sweep and tune --queue with two stormlab worker processes', () => {
  const name = testPrefix('queue').replace(/:/g, '-');
  const url = `${REDIS_URL}${REDIS_URL.includes('?') ? '&' : '?'}queue=${name}`;
  let workers: Array<{ child: ChildProcess; log: () => string }> = [];

  beforeAll(async () => {
    expect(inject('distBuildError')).toBe('');
    workers = await Promise.all([startWorker(url), startWorker(url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(workers.map((w) => (w.child.exitCode === null ? stop(w.child) : undefined)));
    const q = new Queue(name, { connection: parseQueueUrl(url).connection });
    await q.obliterate({ force: true }).catch(() => undefined);
    await q.close();
  }, 60_000);

  it('gives the sweep of a local run, byte for byte but timing, and counts the workers that ran it', async () => {
    const remote = await cli(['sweep', 'flaky.yaml', ...GRID, '--queue', url, '--json', 'q.json'], { cwd: dir });
    expect(remote.code, remote.err).toBe(0);
    expect(remote.err).toContain(`on the queue ${name} at`);
    const local = await cli(['sweep', 'flaky.yaml', ...GRID, '--workers', '1', '--json', 'l.json'], { cwd: dir });
    const q = JSON.parse(remote.files.get('q.json')!) as SweepFile;
    const l = JSON.parse(local.files.get('l.json')!) as SweepFile;
    expect(q.points.length).toBe(4);
    expect({ ...q, timing: null }).toEqual({ ...l, timing: null });
    expect(q.timing.workers).toBeGreaterThanOrEqual(1);
    expect(q.timing.workers).toBeLessThanOrEqual(2);
    expect(remote.err).toMatch(/queue: [12] workers? ran the points/);
  }, 120_000);

  it('tunes over the queue to the answer of a local tune', async () => {
    const args = ['--maximize', 'goodput', '--params', 'engine.retryBudget.ratio', '--budget', '6', '--seeds', '2'];
    const remote = await cli(['tune', 'flaky.yaml', ...args, '--queue', url, '--json', 'q.json'], { cwd: dir });
    expect(remote.code, remote.err).toBe(0);
    const local = await cli(['tune', 'flaky.yaml', ...args, '--workers', '1', '--json', 'l.json'], { cwd: dir });
    const q = JSON.parse(remote.files.get('q.json')!);
    const l = JSON.parse(local.files.get('l.json')!);
    expect({ ...q, timing: null }).toEqual({ ...l, timing: null });
  }, 120_000);

  it('stops on SIGTERM with exit 0, saying how many points it ran; together they ran every point', async () => {
    const codes = await Promise.all(workers.map((w) => stop(w.child)));
    expect(codes).toEqual([0, 0]);
    const ran = workers.map((w) => Number(/after (\d+) points?/.exec(w.log())?.[1] ?? Number.NaN));
    // 4 points × 2 seeds for the sweep, then the tune's (6 + the current values) × 2 seeds.
    expect(ran.every(Number.isFinite)).toBe(true);
    expect(ran[0] + ran[1]).toBeGreaterThanOrEqual(8);
  }, 60_000);
});
