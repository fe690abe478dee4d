import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeUpstream } from '../../src/fake-upstream/server.js';
import { Pool } from 'undici';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { CONNECTION_GATE_DEFAULTS, gateConnections } from '../../src/fake-upstream/connection-gate.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A socket as far as the gate sees one: paused while it waits, resumed when handed over, destroyable. */
class FakeSocket extends EventEmitter {
  paused = false;
  destroyed = false;
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
}

/**
 * A server whose own `connection` listener records what it was handed and listens for each
 * socket's `end` (as an HTTP server does: it ends its side); the gate goes in front of it.
 */
function gatedFake(
  perTurn: number,
  endsPerTurn = 1000,
  more: { maxFresh?: number; burstTurns?: number; maxHoldMs?: number; clock?: ManualClock } = {},
) {
  const server = new EventEmitter() as unknown as Server;
  const handed: FakeSocket[] = [];
  const ended: FakeSocket[] = [];
  /** What the server read from each socket, chunk by chunk. */
  const received = new Map<FakeSocket, string[]>();
  server.on('connection', (s: FakeSocket) => {
    handed.push(s);
    s.on('end', () => ended.push(s));
    s.on('data', (d: Buffer) => received.set(s, [...(received.get(s) ?? []), d.toString()]));
  });
  // No burst holds unless a test asks: its arrivals come on whatever turns it runs on.
  const gate = gateConnections(server, { perTurn, endsPerTurn, maxFresh: 1000, freshMs: 50, burstTurns: 0, ...more });
  /** The server read the first request of `s` (an HTTP server emits `request` with it); the request as the gate saw it. */
  const request = (s: FakeSocket) => {
    const req = { socket: s } as unknown as IncomingMessage;
    server.emit('request', req);
    return req;
  };
  const arrive = (n: number): FakeSocket[] => {
    const sockets = Array.from({ length: n }, () => new FakeSocket());
    for (const s of sockets) server.emit('connection', s);
    return sockets;
  };
  return { gate, handed, ended, received, arrive, request };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('gateConnections', () => {
  it('hands a burst to the server perTurn connections per loop turn, in arrival order; what the rest send waits for it', async () => {
    const g = gatedFake(4);
    const sockets = g.arrive(10);
    expect(g.handed).toEqual(sockets.slice(0, 4));
    expect(g.gate.waiting).toBe(6);
    // A connection that waits is read ahead: what it sends is kept and given to the server at hand-over, in order.
    sockets[5].emit('data', Buffer.from('POST / HTTP/1.1\r\n'));
    sockets[5].emit('data', Buffer.from('\r\n'));
    expect(g.received.get(sockets[5])).toBeUndefined();
    await nextTurn();
    expect(g.handed).toEqual(sockets.slice(0, 8));
    expect(g.received.get(sockets[5])).toEqual(['POST / HTTP/1.1\r\n', '\r\n']);
    sockets[5].emit('data', Buffer.from('more'));
    expect(g.received.get(sockets[5])).toEqual(['POST / HTTP/1.1\r\n', '\r\n', 'more']);
    expect(sockets.slice(4, 8).every((s) => !s.paused)).toBe(true);
    await nextTurn();
    expect(g.handed).toEqual(sockets);
    expect(g.gate.waiting).toBe(0);
    // The turn after a full one starts a fresh count: the next arrivals go straight in.
    await nextTurn();
    await nextTurn();
    const later = g.arrive(2);
    expect(g.handed.slice(10)).toEqual(later);
  });

  it('times the first request of a connection that waited from when its bytes came; others from when they are read', async () => {
    const clock = new ManualClock();
    const g = gatedFake(1, 1000, { clock });
    const [first, second, third] = g.arrive(3);
    second.emit('data', Buffer.from('POST'));
    clock.advance(30);
    third.emit('data', Buffer.from('POST'));
    clock.advance(10);
    await nextTurn(); // second handed over, what it sent given to the server
    expect(g.received.get(second)).toEqual(['POST']);
    clock.advance(5);
    expect([g.gate.waitedMs(g.request(first)), g.gate.waitedMs(g.request(second))]).toEqual([0, 45]);
    expect(g.gate.waitedMs(g.request(second))).toBe(0); // its next request was read as it came
    await nextTurn();
    expect(g.gate.waitedMs(g.request(third))).toBe(15);
  });

  it('pauses a waiting connection that sends more than a request, and passes on an end that came meanwhile a turn after its bytes', async () => {
    const g = gatedFake(1);
    const [, big, ending] = g.arrive(3);
    big.emit('data', Buffer.alloc(64 * 1024));
    expect(big.paused).toBe(true);
    ending.emit('data', Buffer.from('POST'));
    ending.emit('end');
    await nextTurn();
    expect(big.paused).toBe(false);
    expect(g.received.get(big)?.join('').length).toBe(64 * 1024);
    await nextTurn();
    expect(g.received.get(ending)).toEqual(['POST']);
    // Its end comes a turn after its bytes, as a later read would bring it: an end at once would
    // abort the request the bytes just made before its handler could answer.
    expect(g.ended).toEqual([]);
    await nextTurn();
    expect(g.ended).toEqual([ending]);
  });

  it('an end read ahead is not passed on to a connection closed in the turn it was handed over', async () => {
    const g = gatedFake(1);
    const [, ending] = g.arrive(2);
    ending.emit('data', Buffer.from('POST'));
    ending.emit('end');
    await nextTurn(); // handed over, its bytes given to the server
    expect(g.received.get(ending)).toEqual(['POST']);
    ending.destroy(); // the server closed it (an answer with connection: close, an error)
    await nextTurn();
    await nextTurn();
    expect(g.ended).toEqual([]);
  });

  it('skips a connection that closed while it waited, and a reset while waiting is not an unhandled error', async () => {
    const g = gatedFake(1);
    const [first, second, third] = g.arrive(3);
    expect(() => second.emit('error', new Error('ECONNRESET'))).not.toThrow();
    second.destroy();
    await nextTurn();
    expect(g.handed).toEqual([first, third]);
    expect(third.listenerCount('error')).toBe(0); // the gate's own listener is gone once it is handed over
  });

  it("runs the server's end listeners endsPerTurn sockets per turn: a burst of closes is torn down over turns", async () => {
    const g = gatedFake(100, 3);
    const sockets = g.arrive(8);
    for (const s of sockets) s.emit('end');
    expect(g.ended).toEqual(sockets.slice(0, 3));
    expect(g.gate.ending).toBe(5);
    await nextTurn();
    expect(g.ended).toEqual(sockets.slice(0, 6));
    sockets[6].destroy(); // closed meanwhile: nothing left to tear down
    await nextTurn();
    expect(g.ended).toEqual([...sockets.slice(0, 6), sockets[7]]);
    expect(g.gate.ending).toBe(0);
    // A listener added after the server's own is not the gate's business: it runs at once.
    await nextTurn();
    const [late] = g.arrive(1);
    const own: string[] = [];
    late.on('end', () => own.push('own'));
    late.emit('end');
    expect(own).toEqual(['own']);
    expect(g.ended.at(-1)).toBe(late);
  });

  it('hands over no more while maxFresh connections wait for their first request; a request, a close or freshMs frees one', async () => {
    const clock = new ManualClock();
    const g = gatedFake(100, 1000, { maxFresh: 2, clock });
    const sockets = g.arrive(6);
    expect(g.handed).toEqual(sockets.slice(0, 2));
    expect(g.gate.fresh).toBe(2);
    await nextTurn();
    expect(g.handed).toHaveLength(2); // room for 100 this turn, but two wait for their requests
    g.request(sockets[0]);
    await nextTurn();
    expect(g.handed).toEqual(sockets.slice(0, 3));
    g.request(sockets[0]); // a connection's later requests change nothing
    sockets[1].emit('close');
    await nextTurn();
    expect(g.handed).toEqual(sockets.slice(0, 4));
    // Two fresh ones (2 and 3) that never send: after freshMs they stop counting.
    clock.advance(49);
    await nextTurn();
    expect(g.handed).toHaveLength(4);
    clock.advance(1);
    await nextTurn();
    expect(g.handed).toEqual(sockets);
    expect(g.gate.waiting).toBe(0);
  });

  it('hands over nothing and tears nothing down while connections are accepted on burstTurns turns in a row; the first turn that accepts none lets them go, read ahead', async () => {
    const clock = new ManualClock();
    const g = gatedFake(100, 1000, { burstTurns: 2, clock });
    const first = g.arrive(3);
    await nextTurn(); // one turn that accepted: not yet a burst
    const second = g.arrive(3);
    expect(g.handed).toEqual([...first, ...second]);
    await nextTurn(); // two turns in a row: the listen queue is not draining
    const held = g.arrive(3);
    expect(g.handed).toHaveLength(6);
    expect(g.gate.waiting).toBe(3);
    held[1].emit('data', Buffer.from('POST'));
    clock.advance(20);
    await nextTurn(); // the turn ends having accepted: still held
    const more = g.arrive(2);
    expect(g.gate.waiting).toBe(5);
    // A client that leaves meanwhile is torn down after the burst too.
    first[0].emit('end');
    expect(g.ended).toEqual([]);
    expect(g.gate.ending).toBe(1);
    await nextTurn(); // so does this one
    expect(g.handed).toHaveLength(6);
    await nextTurn(); // a turn that accepted nothing ends the burst ...
    expect(g.handed).toHaveLength(6);
    await nextTurn(); // ... and what was held is handed over on the turn after
    expect(g.handed).toEqual([...first, ...second, ...held, ...more]);
    expect(g.ended).toEqual([first[0]]);
    expect(g.received.get(held[1])).toEqual(['POST']);
    clock.advance(5);
    expect(g.gate.waitedMs(g.request(held[1]))).toBe(25); // timed from when its bytes came
    // The burst is over: the next arrival goes straight in.
    await nextTurn();
    await nextTurn();
    const after = g.arrive(1);
    expect(g.handed.at(-1)).toBe(after[0]);
  });

  it('a burst holds for maxHoldMs at most: connections accepted on every turn after it (a client without keep-alive) are served as they come', async () => {
    const clock = new ManualClock();
    const g = gatedFake(100, 1000, { burstTurns: 1, maxHoldMs: 50, clock });
    g.arrive(1);
    await nextTurn();
    const held = g.arrive(2);
    expect(g.gate.waiting).toBe(2);
    clock.advance(50);
    await nextTurn(); // accepted on every turn so far, but held long enough: hand-over goes on
    const steady = g.arrive(1);
    await nextTurn();
    expect(g.handed.slice(1)).toEqual([...held, ...steady]);
    for (let i = 0; i < 3; i++) {
      const s = g.arrive(1);
      expect(g.handed.at(-1)).toBe(s[0]); // the burst has held its share: no more holds until it ends
      await nextTurn();
    }
    // A turn without accepts ends the burst; a new one may hold again.
    await nextTurn();
    await nextTurn();
    g.arrive(1);
    await nextTurn();
    g.arrive(1);
    expect(g.gate.waiting).toBe(1);
  });

  it('destroyWaiting destroys what still waits (a closing server must not wait for them)', () => {
    const g = gatedFake(2);
    const sockets = g.arrive(5);
    g.gate.destroyWaiting();
    expect(sockets.map((s) => s.destroyed)).toEqual([false, false, true, true, true]);
    expect(g.gate.waiting).toBe(0);
  });

  it('behind a real HTTP server, every connection of a burst is served', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    gateConnections(server, { perTurn: 2, maxFresh: 3 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<string>((resolve, reject) => {
            const s: Socket = connect(port, '127.0.0.1', () =>
              s.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'),
            );
            let text = '';
            s.on('data', (d: Buffer) => (text += d.toString()));
            s.on('end', () => resolve(text));
            s.on('error', reject);
          }),
      ),
    );
    for (const a of answers) expect(a).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nok$/);
  });

  it('behind a real HTTP server, connections held back and read ahead are served as they were sent', async () => {
    const server = createServer((req, res) => {
      let n = 0;
      req.on('data', (d: Buffer) => (n += d.length));
      req.on('end', () => res.end(`${req.url} ${n}`));
    });
    gateConnections(server, { perTurn: 1, maxFresh: 1 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const post = (path: string, body: string, close = false) =>
      `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n${close ? 'connection: close\r\n' : ''}\r\n${body}`;
    /** One connection: writes `parts` as it opens (ending its side after them if `end`), gives all it read. */
    const exchange = (parts: string[], end = false) =>
      new Promise<string>((resolve, reject) => {
        const s: Socket = connect(port, '127.0.0.1', () => {
          for (const p of parts) s.write(p);
          if (end) s.end();
        });
        let text = '';
        s.on('data', (d: Buffer) => (text += d.toString()));
        s.on('close', () => resolve(text));
        s.on('error', reject);
      });
    const big = 'x'.repeat(200 * 1024);
    const [pipelined, large, halfClosed, garbage, ...plain] = await Promise.all([
      exchange([post('/a', 'abc') + post('/b', 'de', true)]),
      exchange([post('/big', big, true)]),
      exchange([post('/half', '', true)], true),
      exchange(['NOT HTTP AT ALL\r\n\r\n']),
      ...Array.from({ length: 8 }, (_, i) => exchange([post(`/p${i}`, 'z', true)])),
    ]);
    const bodies = (text: string) =>
      text
        .split('HTTP/1.1 ')
        .slice(1)
        .map((r) => r.slice(r.indexOf('\r\n\r\n') + 4));
    expect(bodies(pipelined)).toEqual(['/a 3', '/b 2']);
    expect(bodies(large)).toEqual([`/big ${big.length}`]);
    expect(bodies(halfClosed)).toEqual(['/half 0']);
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(plain.map(bodies)).toEqual(Array.from({ length: 8 }, (_, i) => [`/p${i} 1`]));
  });

  it('behind a real HTTP server, a burst of keep-alive connections that close is torn down', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    gateConnections(server, { perTurn: 2, endsPerTurn: 2 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const sockets = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const s: Socket = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
            s.once('data', () => resolve(s));
            s.on('error', reject);
          }),
      ),
    );
    const open = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
    expect(await open()).toBe(20);
    // Each client ends its side; the server ends its own (a FIN back), a couple per turn.
    const ended = sockets.map((s) => new Promise<void>((resolve) => s.once('end', resolve)));
    for (const s of sockets) s.end();
    await Promise.all(ended);
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await open()).toBe(0);
  });

  it('the fake upstream answers every request of a burst past the connections that may wait for a first request, logged and counted once each', async () => {
    const fake = await createFakeUpstream({
      upstream: { models: [{ name: 'm', slots: 10_000, queue: 0, ttftMs: 0, tpotMs: 0 }] },
    });
    closers.push(() => fake.close());
    const n = CONNECTION_GATE_DEFAULTS.maxFresh * 2 + 7;
    const pool = new Pool(fake.url, { connections: n });
    closers.push(() => pool.destroy());
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
    const statuses = await Promise.all(
      Array.from({ length: n }, async () => {
        const r = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await r.body.json();
        return r.statusCode;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(n);
    expect(fake.stats().http.received).toBe(n);
    expect(fake.requests(n + 1)).toHaveLength(n);
  });

  it('the fake upstream closes while connections are open', async () => {
    const fake = await createFakeUpstream({
      upstream: { models: [{ name: 'm', slots: 1, queue: 1, ttftMs: 1, tpotMs: 0 }] },
    });
    const sockets = Array.from({ length: 5 }, () => connect(fake.port, '127.0.0.1'));
    for (const s of sockets) s.on('error', () => {});
    await Promise.all(sockets.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    await fake.close();
    for (const s of sockets) s.destroy();
  });
});
