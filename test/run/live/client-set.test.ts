import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientSet, type SetRequest } from '../../../src/run/live/client-set.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A server on port 0 that holds every request until the test answers it; `arrived` waits for the n-th. */
async function holdingServer() {
  const held: Array<{ path: string; res: ServerResponse }> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held.push({ path: req.url ?? '', res });
      for (const w of waiters.splice(0))
        if (held.length >= w.n) w.resolve();
        else waiters.push(w);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const arrived = (n: number) =>
    held.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, held, arrived };
}

/** A request whose end is awaited; `cancelled` can be set while it waits. */
function request(set: ClientSet) {
  let end!: (how: string) => void;
  const ended = new Promise<string>((r) => (end = r));
  const h: SetRequest & { cancelled: boolean } = {
    cancelled: false,
    client: undefined,
    onConnect() {},
    onHeaders: () => true,
    onData: () => true,
    onComplete() {
      set.release(h.client!);
      end('complete');
    },
    onError(err: Error) {
      set.release(h.client!);
      end(`error ${err.message}`);
    },
  } as SetRequest & { cancelled: boolean };
  return { h, ended };
}

describe('ClientSet', () => {
  it('keeps at most `connections` requests out; the rest wait in order, cancelled ones are dropped', async () => {
    const srv = await holdingServer();
    const set = new ClientSet(srv.url, 2, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    closers.push(() => set.destroy());
    const reqs = [0, 1, 2, 3, 4].map(() => request(set));
    reqs.forEach((r, i) => set.dispatch({ path: `/${i}`, method: 'GET' }, r.h));
    await srv.arrived(2);
    expect(srv.held.map((h) => h.path)).toEqual(['/0', '/1']);
    expect(set.pending).toBe(3); // three wait for a connection
    reqs[2].h.cancelled = true; // gives up while it waits: never sent
    srv.held[0].res.end('a');
    expect(await reqs[0].ended).toBe('complete');
    await srv.arrived(3);
    expect(srv.held.map((h) => h.path)).toEqual(['/0', '/1', '/3']);
    expect(set.pending).toBe(1);
    srv.held[1].res.end('b');
    await srv.arrived(4);
    expect(srv.held.map((h) => h.path)).toEqual(['/0', '/1', '/3', '/4']);
    expect(set.pending).toBe(0);
    for (const h of srv.held.slice(2)) h.res.end('c');
    expect(await Promise.all([reqs[1].ended, reqs[3].ended, reqs[4].ended])).toEqual([
      'complete',
      'complete',
      'complete',
    ]);
  });
});
