import { StormlabError } from '../engine/errors.js';
import { formatDuration } from '../upstream/duration.js';
import type { QueueTarget } from './queue-target.js';
import { reachRedis } from './reach-redis.js';

/** How long a queue's Redis may be away before the sweep, tune or worker gives up on it (`--queue-wait`). */
export const QUEUE_WAIT_DEFAULT_MS = 30_000;

/** How often the watch asks the queue's Redis for a PING. */
const CHECK_EVERY_MS = 1000;

/** The queue's Redis was away longer than `--queue-wait`: one line, exit 3 (the work it held is lost). */
export class QueueLostError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_QUEUE_LOST', message);
  }
}

export interface QueueWatchOptions {
  /** How long Redis may be away before `onLost`. @default QUEUE_WAIT_DEFAULT_MS */
  waitMs?: number;
  /** One line per change of state (gone, back), never one per failed reconnect. */
  say(line: string): void;
  /** Redis answers again after it was away: what was on the queue may be gone with it. */
  onBack?(): void;
  /** Redis was away longer than `waitMs`; called once, and the watch stops. */
  onLost(error: QueueLostError): void;
  /** @default CHECK_EVERY_MS */
  everyMs?: number;
}

export interface QueueWatch {
  /** Whether the last check found Redis away. */
  readonly down: boolean;
  stop(): void;
}

/**
 * Watches the queue's Redis beside BullMQ, whose clients reconnect for ever and, left alone,
 * print every failed attempt as a stack: a PING each `everyMs`; the first that fails says so
 * (one line), one that answers after says so too and calls `onBack`, and `waitMs` of failures
 * end in `onLost`. Stop it when done: its timer keeps the process alive.
 */
export function watchQueue(target: QueueTarget, o: QueueWatchOptions): QueueWatch {
  const waitMs = o.waitMs ?? QUEUE_WAIT_DEFAULT_MS;
  const everyMs = o.everyMs ?? CHECK_EVERY_MS;
  const where = `${target.connection.host}:${target.connection.port}`;
  let downSince: number | undefined;
  let checking = false;
  let stopped = false;
  const check = async (): Promise<void> => {
    if (checking || stopped) return;
    checking = true;
    try {
      await reachRedis(target, Math.min(everyMs, 1000));
      if (stopped || downSince === undefined) return;
      const away = Date.now() - downSince;
      downSince = undefined;
      o.say(`queue: Redis at ${where} answers again after ${formatDuration(Math.round(away / 100) * 100)}; resuming\n`);
      o.onBack?.();
    } catch (e) {
      if (stopped) return;
      const why = /\(([^)]*)\)$/.exec(e instanceof Error ? e.message : '')?.[1] ?? String(e);
      const now = Date.now();
      if (downSince === undefined) {
        downSince = now;
        o.say(
          `queue: Redis at ${where} does not answer (${why}); waiting up to ${formatDuration(waitMs)} for it (--queue-wait)\n`,
        );
      } else if (now - downSince >= waitMs) {
        watch.stop();
        o.onLost(
          new QueueLostError(
            `--queue: Redis at ${where} did not answer for ${formatDuration(waitMs)} (--queue-wait; last: ${why})`,
          ),
        );
      }
    } finally {
      checking = false;
    }
  };
  // Not unref'd: with Redis away nothing else may hold the process up (BullMQ's reconnect timers
  // do not), and a process that ends there would end silently, in the middle of its wait.
  const timer = setInterval(() => void check(), everyMs);
  const watch: QueueWatch = {
    get down() {
      return downSince !== undefined;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
  return watch;
}
