import { afterEach } from 'vitest';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { Agent, request, type Dispatcher } from 'undici';
import type { EngineHttpOptions } from '../../src/integrations/engine-http-options.js';
import { stormlab } from '../../src/integrations/undici-interceptor.js';
import { drive } from '../helpers/drive.js';

/** One scripted answer. `json` is sent as a JSON body, `sse` as server-sent events, `reset` drops the socket. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
  sse?: unknown[];
  /** Raw server-sent event text, written one element at a time (for `event:` lines, bad bytes). */
  events?: string[];
  /** With `sse`/`events`: drop the connection after the events instead of ending the stream. */
  cut?: boolean;
  /** With `sse`/`events`: keep the connection open after the events (a stall). */
  stall?: boolean;
  reset?: boolean;
  /** Never answer (the client has to give up). */
  hang?: boolean;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedServer {
  origin: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on port 0 answering from a script, one reply per request (the last repeats). */
export async function scriptedServer(script: Reply[]): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const reply = script[Math.min(requests.length, script.length - 1)];
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (reply.hang) return;
      if (reply.reset) {
        req.socket.destroy();
        return;
      }
      if (reply.sse !== undefined || reply.events !== undefined) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...reply.headers });
        res.flushHeaders();
        for (const e of reply.sse ?? []) res.write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
        for (const e of reply.events ?? []) res.write(e);
        if (reply.cut) setImmediate(() => req.socket.destroy());
        else if (!reply.stall) res.end();
        return;
      }
      const text = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? '');
      const type = reply.json !== undefined ? { 'content-type': 'application/json' } : {};
      res.writeHead(reply.status ?? 200, { ...type, ...reply.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A virtual clock, seeded randomness, a tiny fixed backoff and an event log for guard options. */
export function engineSetup() {
  const clock = new ManualClock(1_000_000);
  const events: GuardEvent[] = [];
  const base = {
    clock,
    random: new SeededRandom(7),
    backoff: { strategy: 'exponential' as const, baseMs: 1, capMs: 1 },
    onEvent: (e: GuardEvent) => events.push(e),
    // `run` jumps the virtual clock to the next timer whenever the event loop is idle, which real
    // I/O often is: the integrations' own timers are off here; the tests of them set them and
    // move the clock by hand.
    headersTimeoutMs: Infinity,
    stream: { headersTimeoutMs: Infinity, firstTokenMs: Infinity, idleMs: Infinity },
  };
  /** Settles `work` whose waits are on the virtual clock and whose I/O is real. */
  const run = <T>(work: Promise<T>): Promise<T> => drive(clock, work, 1_000_000);
  const of = <K extends GuardEvent['type']>(type: K) =>
    events.filter((e): e is Extract<GuardEvent, { type: K }> => e.type === type);
  return { clock, events, base, run, of };
}

/** Resolves once `cond()` holds, checking after each turn of the event loop (bounded). */
export function until(cond: () => boolean, maxTurns = 1_000_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let turns = 0;
    const check = (): void => {
      if (cond()) resolve();
      else if (++turns > maxTurns) reject(new Error('until: condition never held'));
      else setImmediate(check);
    };
    check();
  });
}

export const chatBody = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'What is the capital of France?' }],
  max_tokens: 50,
  ...extra,
});

export const completion = (content: string, usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
  usage,
});

export const openaiError = (status: number, type: string, code: string, message: string): Reply => ({
  status,
  json: { error: { message, type, param: null, code } },
});

/** `serve(script)` for a test file: each server started is closed after its test. */
export function useScriptedServers(): (script: Reply[]) => Promise<ScriptedServer> {
  const servers: ScriptedServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script) => {
    const s = await scriptedServer(script);
    servers.push(s);
    return s;
  };
}

/** Dispatchers with the stormlab interceptor on an undici Agent of their own, closed after each test. */
export function useGuardedAgents(): (options: EngineHttpOptions) => Dispatcher {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
  });
  return (options) => {
    const agent = new Agent();
    agents.push(agent);
    return agent.compose(stormlab(options));
  };
}

/** POSTs `body` as JSON to `url` through `dispatcher` (undici's `request`). */
export const postJson = (dispatcher: Dispatcher, url: string, body: unknown) =>
  request(url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** An OpenAI chat completion chunk. */
export const delta = (content: string, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});

/** An OpenAI stream's first chunk: the role, no content yet. */
export const roleChunk = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
};

/** A whole OpenAI stream answering `text`. */
export const openaiStream = (text: string): unknown[] => [roleChunk, delta(text), delta('', 'stop'), '[DONE]'];

/** One Anthropic event, with its `event:` line. */
export const anthropicEvent = (type: string, body: Record<string, unknown> = {}): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;

/** The events of an Anthropic message stream up to (not including) its text deltas. */
export const anthropicStart = (): string[] => [
  anthropicEvent('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-3-5-haiku-latest',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  }),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
];

export const anthropicText = (text: string): string =>
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });

export const anthropicEnd = (): string[] => [
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  }),
  anthropicEvent('message_stop'),
];
