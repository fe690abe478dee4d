import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { delta, engineSetup, roleChunk, until, useGuardedAgents } from './scripted-server.js';

/**
 * The stream guard's limits on both HTTP paths, on a virtual clock, against a server that
 * writes each event when the test says: every limit fires at its own time, and the two paths
 * give the same verdicts (the engine's `StreamWatch` decides on both).
 */
const guarded = useGuardedAgents();
const open: Array<() => void> = [];
afterEach(() => {
  for (const close of open.splice(0)) close();
});

/** A server that holds each request open; `answers[i]` is the i-th request's response. */
async function heldServer(headersAtOnce: boolean) {
  const answers: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answers.push(res);
      if (headersAtOnce) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const send = (i: number, e: unknown) =>
    answers[i].write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answers, send };
}

type Path = 'guardedFetch' | 'undici';
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });

/** Starts one streamed call on `path`; resolves with the text read and the error, if any. */
function call(path: Path, origin: string, options: Record<string, unknown>): Promise<{ text: string; error?: string }> {
  const url = `${origin}/v1/chat/completions`;
  const read = async (text: Promise<string>) => {
    const raw = await text;
    const error = /"code":"(stream_\w+|timeout)"/.exec(raw)?.[1];
    return { text: raw, ...(error ? { error } : {}) };
  };
  if (path === 'guardedFetch') {
    const f = guardedFetch({ ...options, maxAttempts: 1 } as never);
    return f(url, { method: 'POST', body }).then(
      (r) => read(r.text()),
      (e: Error) => ({ text: '', error: e.name }),
    );
  }
  const d = guarded({ ...options, maxAttempts: 1 } as never);
  return request(url, { dispatcher: d, method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
    (r) => read(r.body.text()),
    (e: Error) => ({ text: '', error: e.name }),
  );
}

const S = 1000;

describe.each<Path>(['guardedFetch', 'undici'])('stream limits through %s', (path) => {
  it('regression: firstToken 10 s, idle 1 s, first event at 3 s → no stall, one complete answer', async () => {
    const s = await heldServer(true);
    const { base, clock, of } = engineSetup();
    const stream = { headersTimeoutMs: 10 * S, firstTokenMs: 10 * S, idleMs: 1 * S };
    let done: { text: string; error?: string } | undefined;
    void call(path, s.origin, { ...base, targets: [s.origin], stream }).then((r) => (done = r));
    await until(() => s.answers.length === 1);
    s.send(0, roleChunk);
    for (const ms of [1 * S, 1.2 * S, 0.8 * S]) {
      clock.advance(ms);
      await new Promise((r) => setImmediate(r));
    }
    expect(of('retry')).toEqual([]);
    s.send(0, delta('Paris.'));
    s.send(0, delta('', 'stop'));
    s.send(0, '[DONE]');
    await until(() => done !== undefined);
    expect(done!.error).toBeUndefined();
    expect(done!.text).toContain('Paris.');
    expect(s.answers).toHaveLength(1);
  });

  // headers, firstToken, idle → what the caller gets when nothing more comes, and when.
  const orderings: Array<[string, number, number, number, boolean, string, number]> = [
    ['headers first', 1 * S, 2 * S, 3 * S, false, 'TimeoutError', 1 * S],
    ['first token before headers', 2 * S, 1 * S, 3 * S, false, 'StreamError', 1 * S],
    ['first token after headers, idle shorter', 3 * S, 2 * S, 1 * S, true, 'stream_stall', 2 * S],
  ];
  it.each(orderings)('%s', async (_name, headersTimeoutMs, firstTokenMs, idleMs, headersAtOnce, error, at) => {
    const s = await heldServer(headersAtOnce);
    const { base, clock } = engineSetup();
    const start = clock.now();
    let done: { text: string; error?: string } | undefined;
    let doneAt = -1;
    const stream = { headersTimeoutMs, firstTokenMs, idleMs };
    void call(path, s.origin, { ...base, targets: [s.origin], stream, headersTimeoutMs }).then((r) => {
      done = r;
      doneAt = clock.now();
    });
    await until(() => s.answers.length === 1);
    if (headersAtOnce) s.send(0, roleChunk);
    await new Promise((r) => setImmediate(r));
    clock.advance(at - 1);
    await new Promise((r) => setImmediate(r));
    expect(done).toBeUndefined();
    clock.advance(1);
    await until(() => done !== undefined);
    expect(doneAt - start).toBe(at);
    expect(done!.error).toBe(error);
  });

  it('idle after the first token fires at idleMs after the last event', async () => {
    const s = await heldServer(true);
    const { base, clock } = engineSetup();
    const start = clock.now();
    let done: { text: string; error?: string } | undefined;
    let doneAt = -1;
    const stream = { headersTimeoutMs: 10 * S, firstTokenMs: 10 * S, idleMs: 2 * S };
    void call(path, s.origin, { ...base, targets: [s.origin], stream }).then((r) => {
      done = r;
      doneAt = clock.now();
    });
    await until(() => s.answers.length === 1);
    s.send(0, delta('Par'));
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(1 * S);
    s.send(0, delta('is'));
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(2 * S - 1);
    await new Promise((r) => setImmediate(r));
    expect(done).toBeUndefined();
    clock.advance(1);
    await until(() => done !== undefined);
    expect(doneAt - start).toBe(3 * S);
    expect(done!.error).toBe('stream_stall');
    expect(done!.text).toContain('Par');
  });
});
