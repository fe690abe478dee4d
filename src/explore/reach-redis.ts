import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { QueueError, type QueueTarget } from './queue-target.js';

/** How long `reachRedis` waits for the queue's Redis to answer before giving up. */
export const REACH_TIMEOUT_MS = 5000;

/** RESP for one command. */
function command(...args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/**
 * Checks once, before BullMQ starts, that the queue's Redis answers a PING (after AUTH when
 * the URL has credentials): BullMQ's client would otherwise retry for ever, silent, on a host
 * that is not there. Rejects with a `QueueError` naming the address and why, within `timeoutMs`.
 */
export function reachRedis(target: QueueTarget, timeoutMs: number = REACH_TIMEOUT_MS): Promise<void> {
  const { host, port, username, password, tls } = target.connection;
  const where = `${host}:${port}`;
  return new Promise((resolve, reject) => {
    const socket: Socket =
      tls === undefined ? connectTcp(port, host) : connectTls({ host, port, servername: host, ...tls });
    let reply = '';
    const done = (why?: string): void => {
      clearTimeout(timer);
      socket.destroy();
      if (why === undefined) resolve();
      else reject(new QueueError(`--queue: no Redis answers at ${where} (${why})`));
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    socket.once(tls === undefined ? 'connect' : 'secureConnect', () => {
      const auth =
        password === undefined ? '' : command('AUTH', ...(username === undefined ? [] : [username]), password);
      socket.write(`${auth}${command('PING')}`);
    });
    socket.on('data', (d) => {
      reply += String(d);
      const error = /^-(.*)\r\n/m.exec(reply);
      if (error !== null) done(error[1]);
      else if (reply.includes('+PONG\r\n')) done();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    socket.on('close', () => done('the connection closed'));
  });
}
