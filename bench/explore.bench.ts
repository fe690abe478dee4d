import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/stormlab.js', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Light points (brownout, 12 of them: the grid the README's sweep shows) and heavy ones (the same, 10× longer). */
const GRID = ['--param', 'engine.throttle.k=1.1,1.5,2,3', '--param', 'engine.retryBudget.ratio=0.05,0.1,0.2'];
const POINTS = 12;
const HEAVY = ['--duration', '600s'];

interface SweepRun {
  wallMs: number;
  workers: number;
  line: string;
}

/** One `stormlab sweep brownout` process: its wall time, and the workers it says it used. */
function sweep(extra: string[]): SweepRun {
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-bench-'));
  const file = join(dir, 'sweep.json');
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, 'sweep', 'brownout', ...GRID, '--json', file, ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`bench: sweep ${extra.join(' ')} exited ${r.status}: ${r.stderr}`);
  const json = JSON.parse(readFileSync(file, 'utf8')) as { timing: { workers: number } };
  rmSync(dir, { recursive: true, force: true });
  const line = /workers: auto chose[^\n]*/.exec(r.stderr)?.[0] ?? '';
  return { wallMs, workers: json.timing.workers, line };
}

function redisAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port || 6379), u.hostname);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(String(d).includes('PONG')));
    socket.on('error', () => done(false));
  });
}

function startWorker(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', url], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (d) => {
      log += String(d);
      if (log.includes('taking points')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`bench: worker exited ${code}: ${log}`)));
  });
}

/** Rounds of each pair: one worker and auto alternate, so the host's drift falls on both alike. */
const ROUNDS = 3;

/**
 * `--workers 1` and `--workers auto` (which must never be slower) run alternately `ROUNDS`
 * times each; each gets its median wall time (the workers of its last run).
 */
function pair(extra: string[]): { one: SweepRun; auto: SweepRun } {
  const one: SweepRun[] = [];
  const auto: SweepRun[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    one.push(sweep(['--workers', '1', ...extra]));
    auto.push(sweep(extra));
  }
  const mid = (rs: SweepRun[]): SweepRun => ({ ...rs[rs.length - 1], wallMs: median(rs.map((r) => r.wallMs)) });
  return { one: mid(one), auto: mid(auto) };
}

/**
 * `npm run bench -- --suite explore`: sweep points/s on light and heavy points with one worker
 * and with `--workers auto` (which must never be slower), and the same grid through a BullMQ
 * queue taken by two local `stormlab worker` processes (skipped when no Redis answers).
 * Whole processes of the built CLI (`npm run build` first).
 */
export async function exploreSuite(): Promise<Row[]> {
  const light = pair([]);
  const heavy = pair(HEAVY);
  const runs = { lightOne: light.one, lightAuto: light.auto, heavyOne: heavy.one, heavyAuto: heavy.auto };
  const perSec = (r: SweepRun): number => (POINTS / r.wallMs) * 1000;
  let queue: SweepRun | undefined;
  if (await redisAnswers(REDIS_URL)) {
    const name = `stormlab-bench-${process.pid}`;
    const url = `${REDIS_URL}${REDIS_URL.includes('?') ? '&' : '?'}queue=${name}`;
    const workers = await Promise.all([startWorker(url), startWorker(url)]);
    try {
      queue = sweep(['--queue', url, ...HEAVY]);
    } finally {
      for (const w of workers) w.kill('SIGTERM');
    }
  } else console.log(`explore: no Redis answers at ${REDIS_URL}: the queue row is skipped`);
  const line = (name: string, r: SweepRun) => ({
    sweep: name,
    'wall ms': r.wallMs,
    workers: r.workers,
    'points/s': perSec(r),
  });
  printTable(`explore: sweep brownout, ${POINTS} points, whole processes (median of ${ROUNDS}, alternating)`, [
    line('light (90 s points), 1 worker', runs.lightOne),
    line('light, --workers auto', runs.lightAuto),
    line('heavy (600 s points), 1 worker', runs.heavyOne),
    line('heavy, --workers auto', runs.heavyAuto),
    ...(queue === undefined ? [] : [line('heavy, --queue, 2 local stormlab workers', queue)]),
  ]);
  for (const r of [runs.lightAuto, runs.heavyAuto]) if (r.line !== '') console.log(r.line);
  const row = (name: string, value: number, unit: string): Row => ({
    suite: 'explore',
    name,
    value: Number(value.toFixed(3)),
    unit,
  });
  return [
    row('sweep-light-1-worker-points-per-sec', perSec(runs.lightOne), 'points/s'),
    row('sweep-light-auto-points-per-sec', perSec(runs.lightAuto), 'points/s'),
    row('sweep-light-auto-workers', runs.lightAuto.workers, 'workers'),
    row('sweep-heavy-1-worker-points-per-sec', perSec(runs.heavyOne), 'points/s'),
    row('sweep-heavy-auto-points-per-sec', perSec(runs.heavyAuto), 'points/s'),
    row('sweep-heavy-auto-workers', runs.heavyAuto.workers, 'workers'),
    ...(queue === undefined
      ? []
      : [
          row('queue-2-workers-points-per-sec', perSec(queue), 'points/s'),
          row('queue-2-workers-used', queue.workers, 'workers'),
        ]),
  ];
}
