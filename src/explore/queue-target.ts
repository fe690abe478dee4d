import { StormlabError } from '../engine/errors.js';

/** `--queue` that cannot be used (a bad URL, bullmq missing): one line, exit 2. */
export class QueueError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_QUEUE', message);
  }
}

/** Where a coordinator puts points and workers take them: a Redis and a queue name on it. */
export interface QueueTarget {
  connection: { host: string; port: number; db: number; username?: string; password?: string; tls?: object };
  /** The BullMQ queue: `stormlab-points` unless the URL says `?queue=name`. */
  name: string;
}

export const QUEUE_DEFAULTS = { name: 'stormlab-points' } as const;

/**
 * `redis://[user:password@]host[:port][/db][?queue=name]` (or `rediss://` for TLS). Every
 * coordinator and worker on the same URL share the queue; `?queue=` keeps fleets apart.
 */
export function parseQueueUrl(raw: string): QueueTarget {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new QueueError(`--queue: expected a URL like redis://127.0.0.1:6379, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new QueueError(`--queue: expected a redis:// or rediss:// URL, got ${JSON.stringify(raw)}`);
  const db = u.pathname === '' || u.pathname === '/' ? 0 : Number(u.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0)
    throw new QueueError(`--queue: expected a database number after the host (/0), got ${JSON.stringify(u.pathname)}`);
  const name = u.searchParams.get('queue') ?? QUEUE_DEFAULTS.name;
  if (!/^[\w.-]+$/.test(name))
    throw new QueueError(`--queue: expected a queue name of letters, digits, . _ -, got ${JSON.stringify(name)}`);
  return {
    connection: {
      host: u.hostname || '127.0.0.1',
      port: u.port === '' ? 6379 : Number(u.port),
      db,
      ...(u.username === '' ? {} : { username: decodeURIComponent(u.username) }),
      ...(u.password === '' ? {} : { password: decodeURIComponent(u.password) }),
      ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    },
    name,
  };
}

/**
 * bullmq, loaded on use: it is an optional peer dependency, needed only for `--queue` and
 * `stormlab worker`. Missing, it is one line saying how to get it.
 */
export async function loadBullmq(): Promise<typeof import('bullmq')> {
  try {
    return await import('bullmq');
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new QueueError('--queue needs the bullmq package, which is not installed: npm install bullmq');
    throw e;
  }
}
