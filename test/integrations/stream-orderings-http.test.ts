import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { stormlab } from '../../src/integrations/undici-interceptor.js';
import { ORDERINGS, type Ordering } from '../stream-orderings.js';
import { delta, engineSetup, openaiStream, roleChunk, until, useScriptedServers } from './scripted-server.js';

/**
 * The stream guard's limit orderings (`test/stream-orderings.ts`) on both HTTP paths, on a
 * virtual clock: a primary that plays the ordering's script and a fallback that answers whole.
 * Each case gets the verdict the engine's `StreamGuard` gives, at the same time: failed over,
 * retried, the caller's stream ended with an in-band error, or complete. The test waits for
 * the bytes it wrote to reach the client (counted below the guard) before it moves the clock.
 */
const serve = useScriptedServers();
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A primary that holds each request open: `answers[i]` is the i-th request's response; bytes written are counted. */
async function heldServer(headersAtOnce: boolean) {
  const answers: ServerResponse[] = [];
  let written = 0;
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
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const send = (i: number, e: unknown): void => {
    const text = `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`;
    written += Buffer.byteLength(text);
    answers[i].write(text);
  };
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    send,
    written: () => written,
  };
}

type Path = 'guardedFetch' | 'undici';
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** Starts one streamed call on `path`; `received()` counts the bytes that reached the client below the guard. */
function start(path: Path, origin: string, options: Record<string, unknown>) {
  let received = 0;
  let done: { text: string; error?: string; at: number } | undefined;
  const clock = options.clock as { now(): number };
  const finish = (text: string) => {
    const error = /"code":"(stream_\w+|timeout)"/.exec(text)?.[1];
    done = { text, ...(error ? { error } : {}), at: clock.now() };
  };
  const url = `${origin}/v1/chat/completions`;
  if (path === 'guardedFetch') {
    const counting: typeof fetch = async (input, init) => {
      const r = await globalThis.fetch(input, init);
      if (r.body === null) return r;
      const tap = new TransformStream<Uint8Array, Uint8Array>({
        transform(c, ctl) {
          received += c.length;
          ctl.enqueue(c);
        },
      });
      return new Response(r.body.pipeThrough(tap), r);
    };
    const f = guardedFetch({ ...options, fetch: counting } as never);
    void f(url, { method: 'POST', body }).then(
      (r) => r.text().then(finish),
      (e: Error) => (done = { text: '', error: e.name, at: clock.now() }),
    );
  } else {
    // Counts what undici hands up, under the stormlab interceptor.
    const counter =
      (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch =>
      (opts, handler) =>
        dispatch(opts, {
          onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
          onResponseStart: (c, s, h, m) => handler.onResponseStart?.(c, s, h, m),
          onResponseData: (c, chunk) => {
            received += chunk.length;
            handler.onResponseData?.(c, chunk);
          },
          onResponseEnd: (c, t) => handler.onResponseEnd?.(c, t),
          onResponseError: (c, e) => handler.onResponseError?.(c, e),
        });
    const agent = new Agent();
    closers.push(() => agent.close());
    const d = agent.compose(counter, stormlab(options as never));
    void request(url, { dispatcher: d, method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
      (r) => r.body.text().then(finish),
      (e: Error) => (done = { text: '', error: e.name, at: clock.now() }),
    );
  }
  return { received: () => received, done: () => done };
}

describe.each<Path>(['guardedFetch', 'undici'])('the stream guard’s limit orderings through %s', (path) => {
  it.each(ORDERINGS)('$name', async (o: Ordering) => {
    const primary = await heldServer(o.headersAt !== undefined);
    const fallback = await serve([{ sse: openaiStream('fine') }]);
    const { base, clock } = engineSetup();
    const events: GuardEvent[] = [];
    const t0 = clock.now();
    const options = {
      ...base,
      onEvent: (e: GuardEvent) => events.push(e),
      targets: [primary.origin, fallback.origin],
      maxAttempts: 2,
      headersTimeoutMs: o.waits.headersMs,
      stream: {
        headersTimeoutMs: o.waits.headersMs,
        firstTokenMs: o.waits.firstTokenMs,
        idleMs: o.waits.idleMs,
        commit: o.commit,
      },
    };
    const call = start(path, primary.origin, options);
    await until(() => primary.answers.length === 1);
    const script: Array<[number, () => void]> = [];
    if (o.headersAt !== undefined) script.push([o.headersAt, () => primary.send(0, roleChunk)]);
    if (o.firstAt !== undefined) script.push([o.firstAt, () => primary.send(0, delta('Par'))]);
    if (o.endAt !== undefined)
      script.push([
        o.endAt,
        () => {
          primary.send(0, delta('is.', 'stop'));
          primary.send(0, '[DONE]');
          primary.answers[0].end();
        },
      ]);
    if (o.cutAt !== undefined) script.push([o.cutAt, () => primary.answers[0].end()]);
    script.sort((a, b) => a[0] - b[0]);
    const { decision, error, at } = o.verdict;
    // Everything scripted before the verdict's time, each write seen by the client before the clock moves on.
    for (const [t, act] of script) {
      if (t >= at) break;
      clock.advance(t0 + t - clock.now());
      act();
      await until(() => call.received() >= primary.written());
      await turns();
    }
    clock.advance(t0 + at - 1 - clock.now());
    await turns();
    expect(call.done()).toBeUndefined();
    expect(events.filter((e) => e.type === 'retry' || e.type === 'fallback')).toEqual([]);
    clock.advance(1);
    for (const [t, act] of script) if (t === at) act();
    if (decision === 'FailOver') {
      await until(() => call.done() !== undefined);
      const moved = events.find((e) => e.type === 'fallback');
      expect(moved).toMatchObject({ type: 'fallback', why: error, at: t0 + at });
      expect(fallback.requests).toHaveLength(1);
      expect(call.done()!.error).toBeUndefined();
      expect(call.done()!.text).toContain('fine');
    } else if (decision === 'Retry') {
      await until(() => events.some((e) => e.type === 'retry'));
      expect(events.find((e) => e.type === 'retry')).toMatchObject({ class: error, at: t0 + at });
      clock.advance(1); // the backoff
      await until(() => primary.answers.length === 2);
      for (const e of openaiStream('again')) primary.send(1, e);
      primary.answers[1].end();
      await until(() => call.done() !== undefined);
      expect(call.done()!.error).toBeUndefined();
      expect(fallback.requests).toHaveLength(0);
    } else {
      await until(() => call.done() !== undefined);
      expect(call.done()!.at).toBe(t0 + at);
      expect(call.done()!.error).toBe(decision === 'EndWithError' ? error : undefined);
      expect(call.done()!.text).toContain('Par');
      expect(primary.answers).toHaveLength(1);
      expect(fallback.requests).toHaveLength(0);
      expect(events.filter((e) => e.type === 'retry' || e.type === 'fallback')).toEqual([]);
    }
  });
});

describe.each<Path>(['guardedFetch', 'undici'])('limits per target through %s', (path) => {
  /** A reasoning model that may think for 120 s before its first token, then a chat fallback that must start within 10 s. */
  async function chain() {
    const reasoning = await heldServer(true);
    const chat = await heldServer(true);
    const { base, clock } = engineSetup();
    const events: GuardEvent[] = [];
    const options = {
      ...base,
      onEvent: (e: GuardEvent) => events.push(e),
      targets: [
        { name: 'reasoning', origin: reasoning.origin, model: 'o3', stream: { firstTokenMs: 120_000 } },
        { name: 'chat', origin: chat.origin, model: 'gpt-4o-mini', stream: { firstTokenMs: 10_000, idleMs: 2_000 } },
      ],
      maxAttempts: 2,
      // The guard's own: what a target without limits of its own would get.
      stream: { headersTimeoutMs: 10_000, firstTokenMs: 20_000, idleMs: 15_000 },
    };
    const call = start(path, reasoning.origin, options);
    await until(() => reasoning.answers.length === 1);
    return { reasoning, chat, clock, events, call, t0: clock.now() };
  }

  it('the reasoning model’s first token at 100 s is waited for (above the guard’s 20 s and its idle 15 s)', async () => {
    const { reasoning, chat, clock, events, call, t0 } = await chain();
    reasoning.send(0, roleChunk);
    await until(() => call.received() >= reasoning.written());
    for (let t = 10_000; t < 100_000; t += 10_000) {
      clock.advance(10_000);
      await turns();
    }
    expect(events.filter((e) => e.type === 'fallback')).toEqual([]);
    clock.advance(t0 + 100_000 - clock.now());
    for (const e of openaiStream('thought it through')) reasoning.send(0, e);
    reasoning.answers[0].end();
    await until(() => call.done() !== undefined);
    expect(call.done()!.error).toBeUndefined();
    expect(call.done()!.text).toContain('thought it through');
    expect(chat.answers).toHaveLength(0);
  });

  it('a silent reasoning model fails over at 120 s; the chat fallback’s own 10 s runs from its start', async () => {
    const { reasoning, chat, clock, events, call, t0 } = await chain();
    reasoning.send(0, roleChunk);
    await until(() => call.received() >= reasoning.written());
    clock.advance(120_000 - 1);
    await turns();
    expect(chat.answers).toHaveLength(0);
    clock.advance(1);
    await until(() => chat.answers.length === 1);
    expect(events.find((e) => e.type === 'fallback')).toMatchObject({ why: 'stream_stall', at: t0 + 120_000 });
    chat.send(0, roleChunk);
    await until(() => call.received() >= reasoning.written() + chat.written());
    clock.advance(10_000 - 1);
    await turns();
    expect(call.done()).toBeUndefined();
    clock.advance(1);
    // The chat model's own first-token limit ran out at 130 s (not the guard's 20 s): retried on it (attempts are per target).
    await until(() => events.some((e) => e.type === 'retry'));
    expect(events.filter((e) => e.type === 'retry')).toMatchObject([
      { target: 'chat', class: 'stream_stall', at: t0 + 130_000 },
    ]);
    clock.advance(1);
    await until(() => chat.answers.length === 2);
    for (const e of openaiStream('quick answer')) chat.send(1, e);
    chat.answers[1].end();
    await until(() => call.done() !== undefined);
    expect(call.done()!.error).toBeUndefined();
    expect(call.done()!.text).toContain('quick answer');
  });
});
