import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { reachRedis } from '../../src/explore/reach-redis.js';
import { parseQueueUrl } from '../../src/explore/queue-target.js';
import { cli } from '../cli/capture-io.js';

const servers: Server[] = [];
const sockets: Socket[] = [];

/** A TCP server on 127.0.0.1, port 0, that answers each chunk it receives with `reply(chunk)` (or never). */
async function server(reply?: (chunk: string) => string): Promise<number> {
  const s = createServer((socket) => {
    sockets.push(socket);
    socket.on('data', (d) => reply !== undefined && socket.write(reply(String(d))));
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as { port: number }).port;
}

/** A port nothing listens on: a server's, once it closed. */
async function closedPort(): Promise<number> {
  const port = await server();
  await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
  return port;
}

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('reachRedis', () => {
  it('resolves when the server answers PONG, after AUTH when the URL has a password', async () => {
    const seen: string[] = [];
    const port = await server((c) => {
      seen.push(c);
      return c.includes('AUTH') ? '+OK\r\n+PONG\r\n' : '+PONG\r\n';
    });
    await expect(reachRedis(parseQueueUrl(`redis://127.0.0.1:${port}`))).resolves.toBeUndefined();
    await expect(reachRedis(parseQueueUrl(`redis://u:p%40ss@127.0.0.1:${port}`))).resolves.toBeUndefined();
    expect(seen[1]).toContain('$4\r\nAUTH\r\n$1\r\nu\r\n$4\r\np@ss\r\n');
  });

  it('names the address and why: refused, an error reply, no answer in time', async () => {
    const refused = await closedPort();
    await expect(reachRedis(parseQueueUrl(`redis://127.0.0.1:${refused}`))).rejects.toThrow(
      `--queue: no Redis answers at 127.0.0.1:${refused} (ECONNREFUSED)`,
    );
    const noauth = await server(() => '-NOAUTH Authentication required.\r\n');
    await expect(reachRedis(parseQueueUrl(`redis://127.0.0.1:${noauth}`))).rejects.toThrow(
      `no Redis answers at 127.0.0.1:${noauth} (NOAUTH Authentication required.)`,
    );
    const silent = await server();
    await expect(reachRedis(parseQueueUrl(`redis://127.0.0.1:${silent}`), 50)).rejects.toThrow(
      `no Redis answers at 127.0.0.1:${silent} (no answer within 0.05 s)`,
    );
  });
});

describe('--queue with no Redis there', () => {
  it('stormlab worker and sweep --queue fail at once: one line, exit 2', async () => {
    const port = await closedPort();
    const url = `redis://127.0.0.1:${port}`;
    const worker = await cli(['worker', '--queue', url]);
    expect(worker.code).toBe(2);
    expect(worker.err).toBe(`stormlab: --queue: no Redis answers at 127.0.0.1:${port} (ECONNREFUSED)\n`);
    // Not quiet: the line that would announce the sweep on the queue is not printed before the error.
    for (const command of [
      ['sweep', 'retry-storm', '--param', 'engine.throttle.k=1.5,2'],
      ['tune', 'retry-storm', '--maximize', 'goodput', '--params', 'engine.throttle.k', '--budget', '2'],
    ]) {
      const r = await cli([...command, '--queue', url]);
      expect(r.code, command[0]).toBe(2);
      expect(r.err, command[0]).toBe(`stormlab: --queue: no Redis answers at 127.0.0.1:${port} (ECONNREFUSED)\n`);
      expect(r.out).toBe('');
    }
  });

  it('bad input still comes first, before any wait for the queue', async () => {
    const r = await cli(['sweep', 'retry-storm', '--param', 'nope=1,2', '--queue', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: --param nope: unknown key\n');
  });
});
