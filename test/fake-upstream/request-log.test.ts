import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { KnownBodies } from '../../src/fake-upstream/known-bodies.js';
import { RequestLog, type RequestLogEntry } from '../../src/fake-upstream/request-log.js';
import { Detail } from '../../src/upstream/response.js';

/** A response as the log reads it: it closes when told, finished or not. */
function response(): ServerResponse & { close(status: number, finished: boolean): void } {
  const res = new EventEmitter() as EventEmitter & Record<string, unknown>;
  res.headersSent = false;
  res.statusCode = 200;
  res.writableFinished = false;
  res.close = (status: number, finished: boolean) => {
    if (status > 0) Object.assign(res, { headersSent: true, statusCode: status });
    res.writableFinished = finished;
    res.emit('close');
  };
  return res as unknown as ServerResponse & { close(status: number, finished: boolean): void };
}

const request = (headers: Record<string, string> = {}): IncomingMessage =>
  ({ method: 'POST', headers }) as unknown as IncomingMessage;

describe('RequestLog', () => {
  it('keeps the newest entries in a ring, oldest first, each as it was logged', () => {
    let now = 0;
    const sunk: RequestLogEntry[] = [];
    const log = new RequestLog(
      () => now,
      Date.UTC(2026, 0, 1),
      (e) => sunk.push(e),
      3,
    );
    for (let i = 0; i < 5; i++) {
      const res = response();
      now = i * 10;
      log.begin(request(i % 2 === 0 ? { 'x-stainless-retry-count': String(i) } : {}), res, `/v1/r${i}`);
      log.request(res, `m${i}`, i === 3);
      if (i === 4) log.outcome(res, Detail.MidStream);
      now += 2.25;
      // 0 finishes, 1 is left by its client, 2 breaks after its headers, 3 and 4 finish.
      res.close(i === 1 ? 0 : 200, i === 0 || i === 3);
    }
    expect(sunk.map((e) => e.route)).toEqual(['/v1/r0', '/v1/r1', '/v1/r2', '/v1/r3', '/v1/r4']);
    expect(sunk[1]).toMatchObject({ status: 0, fault: 'ClientClosed', retryCount: null });
    expect(log.list()).toEqual(sunk.slice(2));
    expect(log.list(2)).toEqual(sunk.slice(3));
    expect(log.list(0)).toEqual([]);
    expect(sunk[2]).toEqual({
      time: '2026-01-01T00:00:00.020Z',
      method: 'POST',
      route: '/v1/r2',
      model: 'm2',
      retryCount: 2,
      stream: false,
      status: 200,
      fault: 'Broken',
      latencyMs: 2.3,
    });
    expect(sunk[3]).toMatchObject({ stream: true, fault: null, retryCount: null });
    expect(sunk[4]).toMatchObject({ fault: 'MidStream', retryCount: 4 });
  });

  it('lists what it has before the ring is full, and nothing after a clear', () => {
    const log = new RequestLog(() => 0, 0, undefined, 4);
    for (const route of ['/v1/a', '/v1/b']) {
      const res = response();
      log.begin(request(), res, route);
      res.close(200, true);
    }
    expect(log.list().map((e) => e.route)).toEqual(['/v1/a', '/v1/b']);
    expect(log.list(1).map((e) => e.route)).toEqual(['/v1/b']);
    log.clear();
    expect(log.list()).toEqual([]);
  });
});

describe('KnownBodies', () => {
  it('finds each body by its text, the last one and the others, and starts over past its size', () => {
    const known = new KnownBodies<number>(2);
    known.set('a', 1);
    known.set('b', 2);
    expect([known.get('a'), known.get('b'), known.get(['a'].join('')), known.get('c')]).toEqual([1, 2, 1, undefined]);
    known.set('c', 3); // a third: the memory starts over with it
    expect([known.get('a'), known.get('b'), known.get('c')]).toEqual([undefined, undefined, 3]);
  });
});
