import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeUpstream } from '../../src/fake-upstream/server.js';
import { gateConnections } from '../../src/fake-upstream/connection-gate.js';

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

/** A server whose own `connection` listener records what it was handed; the gate goes in front of it. */
function gatedFake(perTurn: number) {
  const server = new EventEmitter() as unknown as Server;
  const handed: FakeSocket[] = [];
  server.on('connection', (s: FakeSocket) => handed.push(s));
  const gate = gateConnections(server, perTurn);
  const arrive = (n: number): FakeSocket[] => {
    const sockets = Array.from({ length: n }, () => new FakeSocket());
    for (const s of sockets) server.emit('connection', s);
    return sockets;
  };
  return { gate, handed, arrive };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('gateConnections', () => {
  it('hands a burst to the server perTurn connections per loop turn, in arrival order; the rest wait paused', async () => {
    const g = gatedFake(4);
    const sockets = g.arrive(10);
    expect(g.handed).toEqual(sockets.slice(0, 4));
    expect(g.gate.waiting).toBe(6);
    expect(sockets.slice(4).every((s) => s.paused)).toBe(true);
    await nextTurn();
    expect(g.handed).toEqual(sockets.slice(0, 8));
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

  it('skips a connection that closed while it waited, and a reset while waiting is not an unhandled error', async () => {
    const g = gatedFake(1);
    const [first, second, third] = g.arrive(3);
    expect(() => second.emit('error', new Error('ECONNRESET'))).not.toThrow();
    second.destroy();
    await nextTurn();
    expect(g.handed).toEqual([first, third]);
    expect(third.listenerCount('error')).toBe(0); // the gate's own listener is gone once it is handed over
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
    gateConnections(server, 2);
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
