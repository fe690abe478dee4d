import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import type { ToolConfig } from '../../src/upstream/tool-config.js';
import type { ToolServiceStats } from '../../src/upstream/tool-service.js';
import { fast, json, start, type Harness } from './harness.js';

/** One email tool: 100 ms per send, 4 at once, a queue of 4. */
const gmail = (extra: Partial<ToolConfig> = {}): ToolConfig => ({
  name: 'gmail.send',
  slots: 4,
  queue: 4,
  latencyMs: 100,
  faults: [],
  ...extra,
});

async function toolStats(h: Harness): Promise<ToolServiceStats> {
  const body = (await json(fetch(`${h.url}/_stormlab/tools`))) as { tools: ToolServiceStats[] };
  return body.tools[0];
}

/** Asks the server until it has received `n` tool requests (each ask is a round trip: no sleep), at most 200 times. */
async function received(h: Harness, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) if ((await toolStats(h)).requests >= n) return;
  throw new Error(`the server never received ${n} tool requests`);
}

const send = (h: Harness, body: unknown, key?: string, signal?: AbortSignal) =>
  h.post('/_stormlab/tools/gmail.send', body, {
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    ...(signal === undefined ? {} : { signal }),
  });

describe('fake upstream: the tool service', () => {
  it('does the effect of every request and counts the second execution of an intent as a duplicate', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [fast()], tools: [gmail()] }, { clock });
    const a = send(h, { intent: 'thread-1' });
    const b = send(h, { intent: 'thread-1' });
    const c = send(h, { intent: 'thread-2' });
    await received(h, 3);
    clock.advance(100);
    clock.advance(5);
    expect((await Promise.all([a, b, c])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await toolStats(h)).toMatchObject({ requests: 3, executions: 3, intents: 2, duplicates: 1, conflicts: 0 });
  });

  it('with an idempotency key: a request during the effect is a 409 conflict, one after it gets the receipt', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [fast()], tools: [gmail()] }, { clock });
    const first = send(h, { intent: 'thread-1' }, 't:u1:gmail.send:r1:1');
    await received(h, 1);
    const conflict = send(h, { intent: 'thread-1' }, 't:u1:gmail.send:r1:1');
    await received(h, 2);
    clock.advance(5);
    const c = await conflict;
    expect(c.status).toBe(409);
    expect(Number(c.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    clock.advance(100);
    expect((await first).status).toBe(200);
    const replay = send(h, { intent: 'thread-1' }, 't:u1:gmail.send:r1:1');
    await received(h, 3);
    clock.advance(5);
    expect((await replay).status).toBe(200);
    expect(await toolStats(h)).toMatchObject({ executions: 1, duplicates: 0, conflicts: 1, replays: 1 });
  });

  it('a lost phase does the effect and never answers: the caller gives up on an email that was sent', async () => {
    const clock = new ManualClock();
    const tools = [gmail({ faults: [{ kind: 'lost', fromMs: 0, toMs: 1_000_000, rate: 1 }] })];
    const h = await start({ models: [fast()], tools }, { clock });
    const ac = new AbortController();
    const lost = send(h, { intent: 'thread-1' }, undefined, ac.signal);
    await received(h, 1);
    clock.advance(200);
    const s = await toolStats(h);
    expect(s).toMatchObject({ executions: 1, intents: 1, status: { lost: 1 } });
    ac.abort();
    await expect(lost).rejects.toThrow();
  });

  it('answers 429 with a retry-after past its rate; 404 for a tool it does not serve', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [fast()], tools: [gmail({ rps: 1, slots: 1, queue: 0 })] }, { clock });
    const ok = send(h, {});
    await received(h, 1);
    const limitedP = send(h, {});
    await received(h, 2);
    clock.advance(5);
    const limited = await limitedP;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    clock.advance(1000); // a token back, and the first send done: its slot is free
    const full = send(h, {});
    await received(h, 3);
    clock.advance(100);
    clock.advance(5);
    expect((await ok).status).toBe(200);
    expect((await full).status).toBe(200);
    expect((await toolStats(h)).status).toEqual({ '200': 2, '429': 1 });
    expect((await h.post('/_stormlab/tools/slack.post', {})).status).toBe(404);
  });

  it('reset zeroes the counters and forgets the intents; a server without tools has none', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [fast()], tools: [gmail()] }, { clock });
    const a = send(h, { intent: 'x' });
    await received(h, 1);
    clock.advance(105);
    await a;
    await h.post('/_stormlab/reset', {});
    expect(await toolStats(h)).toMatchObject({ requests: 0, executions: 0, duplicates: 0 });
    expect(h.fu.toolStats()[0].executions).toBe(0);
    const bare = await start({ models: [fast()] });
    expect(await json(fetch(`${bare.url}/_stormlab/tools`))).toEqual({ tools: [] });
  });
});
