import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunSpec } from '../run/run-spec.js';
import type { FleetTimings } from './fleet-protocol.js';
import { FleetRun, type ShareJobBase } from './fleet-run.js';
import { loadBullmq, type QueueTarget } from './queue-target.js';

/**
 * The coordinator's link to a fleet: the queue its shares go on, the queue's events (the
 * workers' reports) and a Redis client for the runs' control keys and `TIME`. One per
 * `run|compare --workers N`; each variant is a `FleetRun` on it.
 */
export class FleetCoordinator {
  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly redis: Redis,
    readonly where: string,
  ) {}

  static async open(target: QueueTarget): Promise<FleetCoordinator> {
    const { Queue, QueueEvents } = await loadBullmq();
    const queue = new Queue(target.name, { connection: target.connection });
    const events = new QueueEvents(target.name, { connection: target.connection });
    const { Redis } = await import('ioredis');
    const redis = new Redis({ ...target.connection, maxRetriesPerRequest: 2 });
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      return new FleetCoordinator(
        queue,
        events,
        redis,
        `the queue ${target.name} at ${target.connection.host}:${target.connection.port}`,
      );
    } catch (e) {
      await Promise.allSettled([queue.close(), events.close()]);
      redis.disconnect();
      throw e;
    }
  }

  /** One variant's run over `workers` shares (not started: `drive` starts it). */
  variant(spec: RunSpec, base: ShareJobBase, workers: number, timings?: Partial<FleetTimings>): FleetRun {
    return new FleetRun(this.queue, this.events, this.redis, spec, base, workers, this.where, timings);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    this.redis.disconnect();
  }
}
