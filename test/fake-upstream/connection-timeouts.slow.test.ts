import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_UPSTREAM } from '../../src/fake-upstream/default-upstream.js';
import { createFakeUpstream, FAKE_UPSTREAM_DEFAULTS, type FakeUpstream } from '../../src/fake-upstream/server.js';

// Real sockets on the real clock: short limits, and every wait bounded.
const HEADERS_MS = 400;
const IDLE_MS = 300;

const servers: FakeUpstream[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(): Promise<FakeUpstream> {
  const s = await createFakeUpstream({
    upstream: DEFAULT_UPSTREAM,
    headersTimeoutMs: HEADERS_MS,
    idleTimeoutMs: IDLE_MS,
  });
  servers.push(s);
  return s;
}

interface Client {
  socket: Socket;
  received: () => string;
  /** When the server closed it (ms after connect), or null if it was still open after `withinMs`. */
  closedWithin(withinMs: number): Promise<number | null>;
}

function client(port: number, onConnect: (s: Socket) => void = () => {}): Client {
  const started = performance.now();
  const socket = connect(port, '127.0.0.1', () => onConnect(socket));
  sockets.push(socket);
  let got = '';
  let closedAt: number | undefined;
  socket.on('data', (d) => void (got += String(d)));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedAt = performance.now() - started;
      resolve();
    }),
  );
  return {
    socket,
    received: () => got,
    async closedWithin(withinMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, withinMs)))]);
      clearTimeout(timer);
      return closedAt ?? null;
    },
  };
}

/** Dribbles one header line every `everyMs` for as long as the socket is open: a slowloris. */
function dribble(s: Socket, everyMs: number): void {
  s.write('GET /_stormlab/stats HTTP/1.1\r\nhost: x\r\n');
  const timer = setInterval(() => (s.writable ? s.write('x-slow: 1\r\n') : clearInterval(timer)), everyMs);
  s.once('close', () => clearInterval(timer));
}

describe('fake upstream connection timeouts', () => {
  it('states its defaults: headers 10 s, idle 5 s', () => {
    expect(FAKE_UPSTREAM_DEFAULTS.headersTimeoutMs).toBe(10_000);
    expect(FAKE_UPSTREAM_DEFAULTS.idleTimeoutMs).toBe(5_000);
  });

  it('closes connections that never send a byte after the idle timeout, many at once', async () => {
    const server = await serve();
    const idle = Array.from({ length: 200 }, () => client(server.port));
    const closed = await Promise.all(idle.map((c) => c.closedWithin(IDLE_MS + 3000)));
    for (const at of closed) {
      expect(at).not.toBeNull();
      expect(at!).toBeGreaterThanOrEqual(IDLE_MS - 50);
    }
    expect(idle.every((c) => c.received() === '')).toBe(true);
  });

  it('answers dribbled headers (slowloris) 408 and closes them, though bytes keep coming', async () => {
    const server = await serve();
    // A byte every 100 ms: never idle for IDLE_MS, so only the headers timeout can end it.
    const slow = Array.from({ length: 50 }, () => client(server.port, (s) => dribble(s, 100)));
    const closed = await Promise.all(slow.map((c) => c.closedWithin(HEADERS_MS + 3000)));
    for (const [i, at] of closed.entries()) {
      expect(at, `slowloris ${i}`).not.toBeNull();
      expect(at!).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(slow[i].received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    }
    // The server serves on.
    expect((await fetch(`${server.url}/_stormlab/stats`)).status).toBe(200);
  });

  it('closes a kept-alive connection idle after its answer; one that keeps asking stays', async () => {
    const server = await serve();
    const ask = (s: Socket): void => void s.write('GET /_stormlab/stats HTTP/1.1\r\nhost: x\r\n\r\n');
    const once = client(server.port, ask);
    const steady = client(server.port, (s) => {
      ask(s);
      const timer = setInterval(() => (s.writable ? ask(s) : clearInterval(timer)), IDLE_MS / 3);
      s.once('close', () => clearInterval(timer));
    });
    // After an answer Node closes a second after the keep-alive hint (timeout=…), so clients that leave at the hint are never cut.
    const at = await once.closedWithin(IDLE_MS + 1000 + 3000);
    expect(at).not.toBeNull();
    expect(once.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(await steady.closedWithin(50)).toBeNull();
    expect(steady.received().split('HTTP/1.1 200 OK').length - 1).toBeGreaterThanOrEqual(3);
  });

  it('never cuts a request in flight: a hang fault holds its connection past both limits', async () => {
    const server = await serve();
    server.setFaults([{ kind: 'hang' }]);
    const body = JSON.stringify({ model: 'primary', messages: [{ role: 'user', content: 'hi' }] });
    const held = client(server.port, (s) =>
      s.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    expect(await held.closedWithin(HEADERS_MS + IDLE_MS + 600)).toBeNull();
    expect(held.received()).toBe('');
    expect(server.stats().inFlight).toBe(1);
  });
});
