import { type ChildProcess, spawn } from 'node:child_process';
import { redisAnswers } from './redis.js';

/**
 * A `redis-server` of a test's own, for tests that kill and restart Redis (never the shared
 * one): no persistence, so a restart comes back empty, as a Redis that lost its data does.
 * Every wait is bounded; `stop()` in `afterAll` kills it whatever state it is in.
 */
export interface OwnRedis {
  port: number;
  url: string;
  /** Starts it (again), empty; resolves once it answers PING. */
  start(): Promise<void>;
  /** Kills it at once (SIGKILL: no goodbye to the clients); resolves once it has exited. */
  kill(): Promise<void>;
  /** Kills it if it runs; for afterAll. */
  stop(): Promise<void>;
}

const START_MS = 10_000;

export function ownRedis(port: number): OwnRedis {
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url,
    async start() {
      await kill();
      const c = spawn(
        'redis-server',
        ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'],
        {
          stdio: 'ignore',
        },
      );
      child = c;
      const deadline = Date.now() + START_MS;
      while (!(await redisAnswers(url))) {
        if (c.exitCode !== null) throw new Error(`redis-server on ${port} exited with ${c.exitCode} (port in use?)`);
        if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer within ${START_MS} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    kill,
    stop: kill,
  };
}
