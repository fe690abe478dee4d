import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from '../cli/capture-io.js';
import { ownRedis } from '../helpers/redis-server.js';
import { flakyScenario } from './flaky-scenario.js';

// Redis killed under a sweep on the queue and under `stormlab worker`, for real: real
// processes (dist/), a redis-server of this file's own (port 6393), every wait bounded, every
// process killed after each test and the server in afterAll.
const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));
const redis = ownRedis(6393);
const dir = tempDir({ 'flaky.yaml': flakyScenario() });
// 8 points of some 0.5 s each (5 min of traffic each): long enough to lose Redis in the middle.
const GRID = ['--param', 'engine.retryBudget.ratio=0.05,0.3', '--param', 'engine.throttle.k=1.5,3', '--seeds', '2'];
const LONG = ['--duration', '5m'];
const children: ChildProcess[] = [];

interface Proc {
  child: ChildProcess;
  err: () => string;
  /** Resolves when stderr holds `text` (rejects after `ms`). */
  saw(text: string, ms?: number): Promise<void>;
  /** The exit code (rejects if it has not exited within `ms`). */
  exit(ms?: number): Promise<number | null>;
}

function stormlab(args: string[]): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  const listeners = new Set<() => void>();
  child.stderr!.on('data', (d) => {
    err += String(d);
    for (const l of listeners) l();
  });
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    err: () => err,
    saw: (text, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} within ${ms} ms in:\n${err}`)), ms);
        const check = () => {
          if (!err.includes(text)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      }),
    exit: (ms = 30_000) =>
      Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${err}`)), ms),
        ),
      ]),
  };
}

/** The points waiting on queue `name` (BullMQ's wait list), asked of this file's Redis; 0 while it is away. */
async function queued(name: string): Promise<number> {
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  try {
    await client.connect();
    return await client.llen(`bull:${name}:wait`);
  } catch {
    return 0;
  } finally {
    client.disconnect();
  }
}

/** Resolves once `ok()` holds, asking again after each answer (rejects after `ms`). */
async function waitFor(ok: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await ok())) {
    if (performance.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stack lines, and raw connection errors as Node prints them: what must never reach stderr. */
function flood(err: string): string[] {
  return err.split('\n').filter((l) => /^\s+at |ECONNREFUSED \d|Unhandled error event|errno:/.test(l));
}

beforeAll(async () => {
  expect(inject('distBuildError')).toBe('');
  await redis.start();
}, 30_000);
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await redis.start(); // each test starts on a Redis that answers (and is empty)
}, 30_000);
afterAll(() => redis.stop());

describe('the queue when its Redis goes away', () => {
  it('stormlab worker: one line when Redis goes, and SIGTERM still exits 0 at once, Redis still away', async () => {
    const worker = stormlab(['worker', '--queue', redis.url]);
    await worker.saw('taking points');
    await redis.kill();
    await worker.saw(
      `worker: queue: Redis at 127.0.0.1:${redis.port} does not answer (ECONNREFUSED); waiting up to 30s`,
    );
    const asked = performance.now();
    worker.child.kill('SIGTERM');
    expect(await worker.exit(15_000)).toBe(0);
    expect(performance.now() - asked).toBeLessThan(10_000);
    expect(worker.err()).toMatch(/worker: stopped \(SIGTERM\) after 0 points \(Redis away/);
    expect(flood(worker.err())).toEqual([]);
    expect(worker.err().trimEnd().split('\n')).toHaveLength(3);
  }, 60_000);

  // The points must outlast the kill, by construction rather than by their length: the only
  // worker is stopped (SIGSTOP) before the sweep puts its points on the queue, so none can be
  // answered until the test lets it go on (SIGCONT), after Redis was killed and came back
  // empty. Every step waits on a state (a line, the queue's length), never on a time.
  it('sweep --queue: Redis killed mid-sweep and back (empty) within --queue-wait: the sweep ends, as a local one would', async () => {
    const name = 'loss-resume';
    const url = `${redis.url}?queue=${name}`;
    const worker = stormlab(['worker', '--queue', url]);
    await worker.saw('taking points');
    worker.child.kill('SIGSTOP');
    try {
      const sweep = stormlab(['sweep', 'flaky.yaml', ...GRID, ...LONG, '--queue', url, '--json', 'q.json']);
      await sweep.saw('sweeping');
      // Mid-sweep: all 8 points are on the queue, none taken.
      await waitFor(async () => (await queued(name)) === 8, 30_000, 'the 8 points on the queue');
      await redis.kill();
      await sweep.saw('does not answer (ECONNREFUSED); waiting up to 30s for it (--queue-wait)');
      await redis.start();
      await sweep.saw('answers again after');
      // Redis came back empty: the coordinator put its unanswered points back on the queue.
      await waitFor(async () => (await queued(name)) === 8, 30_000, 'the 8 points back on the queue');
      worker.child.kill('SIGCONT');
      expect(await sweep.exit(120_000)).toBe(0);
      const local = stormlab(['sweep', 'flaky.yaml', ...GRID, ...LONG, '--workers', '1', '--json', 'l.json']);
      expect(await local.exit(120_000)).toBe(0);
      const q = JSON.parse(readFileSync(join(dir, 'q.json'), 'utf8'));
      const l = JSON.parse(readFileSync(join(dir, 'l.json'), 'utf8'));
      expect({ ...q, timing: null }).toEqual({ ...l, timing: null });
      // One line per change of state, at most: gone, back — for the coordinator and the worker.
      expect(flood(sweep.err())).toEqual([]);
      expect(flood(worker.err())).toEqual([]);
      expect(sweep.err().match(/does not answer/g)?.length).toBe(1);
      expect(sweep.err().match(/answers again/g)?.length).toBe(1);
      expect(worker.err().match(/does not answer/g)?.length ?? 0).toBeLessThanOrEqual(1);
    } finally {
      worker.child.kill('SIGCONT');
    }
  }, 240_000);

  it('sweep --queue: Redis away longer than --queue-wait: one line, exit 3, nothing written, no hang', async () => {
    const url = `${redis.url}?queue=loss-fail`;
    const worker = stormlab(['worker', '--queue', url, '--queue-wait', '2s']);
    await worker.saw('taking points');
    const sweep = stormlab([
      'sweep',
      'flaky.yaml',
      ...GRID,
      ...LONG,
      '--queue',
      url,
      '--queue-wait',
      '2s',
      '--json',
      'f.json',
    ]);
    await sweep.saw('sweeping');
    await redis.kill();
    expect(await sweep.exit(30_000)).toBe(3);
    const lines = sweep.err().trimEnd().split('\n');
    expect(lines.at(-1)).toBe(
      `stormlab: --queue: Redis at 127.0.0.1:${redis.port} did not answer for 2s (--queue-wait; last: ECONNREFUSED)`,
    );
    expect(lines.filter((l) => l.includes('does not answer'))).toHaveLength(1);
    expect(flood(sweep.err())).toEqual([]);
    expect(() => readFileSync(join(dir, 'f.json'))).toThrow();
    // The worker gives up too, with its own line and the same code.
    expect(await worker.exit(30_000)).toBe(3);
    expect(worker.err().trimEnd().split('\n').at(-1)).toMatch(
      /^stormlab: --queue: Redis at 127\.0\.0\.1:6393 did not answer for 2s \(--queue-wait; last: ECONNREFUSED\); the worker stops after \d+ points?$/,
    );
    expect(flood(worker.err())).toEqual([]);
  }, 120_000);

  it('--queue-wait is checked before anything runs', async () => {
    const bad = stormlab(['sweep', 'flaky.yaml', ...GRID, '--queue', redis.url, '--queue-wait', '30']);
    expect(await bad.exit()).toBe(2);
    expect(bad.err()).toBe(
      'stormlab: --queue-wait: expected a duration above 0 with a unit, like 30s or 2m, got "30"\n',
    );
    const alone = stormlab(['sweep', 'flaky.yaml', ...GRID, '--queue-wait', '30s']);
    expect(await alone.exit()).toBe(2);
    expect(alone.err()).toBe('stormlab: --queue-wait: it is the wait for the Redis of --queue; give --queue too\n');
  }, 60_000);
});
