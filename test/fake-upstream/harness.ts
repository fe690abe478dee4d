import { afterEach } from 'vitest';
import { SeededRandom } from '../../src/engine/random.js';
import {
  createFakeUpstream,
  type FakeUpstream,
  type FakeUpstreamConfig,
  type FakeUpstreamOptions,
} from '../../src/fake-upstream/server.js';

type Kind = 'submitted' | 'answered' | 'cancelled' | 'error';

/** A fake upstream on port 0, closed after the test, with awaitable observer events. */
export interface Harness {
  fu: FakeUpstream;
  url: string;
  /** Resolves once `kind` has happened `n` times in all. */
  waitFor(kind: Kind, n?: number): Promise<void>;
  count(kind: Kind): number;
  /** Statuses answered, in order. */
  statuses: number[];
  errors: unknown[];
  post(path: string, body: unknown, init?: RequestInit): Promise<Response>;
  chat(body: Record<string, unknown>, init?: RequestInit): Promise<Response>;
  messages(body: Record<string, unknown>, init?: RequestInit): Promise<Response>;
}

const open: FakeUpstream[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A model that answers at once: no time to first token, none per token. */
export const fast = (name = 'm', extra: Record<string, unknown> = {}) => ({
  name,
  slots: 8,
  queue: 8,
  ttftMs: 0,
  tpotMs: 0,
  ...extra,
});

export const USER = [{ role: 'user', content: 'Say something about retry storms.' }];

/** Request options setting the answer's length (`x-stormlab-output-tokens`): `max`, or its natural length in tokens. */
export const length = (tokens: number | 'max'): RequestInit => ({
  headers: { 'content-type': 'application/json', 'x-stormlab-output-tokens': String(tokens) },
});

export async function start(
  upstream: FakeUpstreamConfig,
  options: Partial<FakeUpstreamOptions> = {},
): Promise<Harness> {
  const counts: Record<Kind, number> = { submitted: 0, answered: 0, cancelled: 0, error: 0 };
  const waiters: Array<{ kind: Kind; n: number; resolve: () => void }> = [];
  const statuses: number[] = [];
  const errors: unknown[] = [];
  const bump = (kind: Kind) => {
    counts[kind]++;
    for (const w of waiters.filter((w) => w.kind === kind && counts[kind] >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const fu = await createFakeUpstream({
    upstream,
    random: new SeededRandom(7),
    ...options,
    observer: {
      submitted: () => bump('submitted'),
      answered: (_m, status) => {
        statuses.push(status);
        bump('answered');
      },
      cancelled: () => bump('cancelled'),
      error: (e) => {
        errors.push(e);
        bump('error');
      },
      ...options.observer,
    },
  });
  open.push(fu);
  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    fetch(fu.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    });
  return {
    fu,
    url: fu.url,
    statuses,
    errors,
    count: (kind) => counts[kind],
    waitFor: (kind, n = 1) =>
      counts[kind] >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ kind, n, resolve })),
    post,
    chat: (body, init) => post('/v1/chat/completions', { model: 'm', messages: USER, ...body }, init),
    messages: (body, init) =>
      post(
        '/v1/messages',
        { model: 'm', messages: USER, max_tokens: 16, ...body },
        {
          ...init,
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...init?.headers },
        },
      ),
  };
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Splits an SSE text into its events. */
export function sseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const e: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) e.event = line.slice(7);
        if (line.startsWith('data: ')) e.data += line.slice(6);
      }
      return e;
    });
}

/** Reads a body to its end or to the error that breaks it, keeping what came before. */
export async function readUntilBroken(res: Response): Promise<{ text: string; error: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: undefined };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** The `cause.code` of a failed fetch (ECONNRESET, UND_ERR_SOCKET, …). */
export function causeCode(e: unknown): string | undefined {
  return ((e as { cause?: { code?: string } }).cause ?? (e as { code?: string }))?.code;
}

/** A response's JSON body, typed loosely for assertions. */
export async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}

/** The next bytes of a stream as text; a stream that ends first fails the test rather than spin. */
export async function nextText(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { done, value } = await reader.read();
  if (done) throw new Error('the stream ended before the events the test waits for');
  return new TextDecoder().decode(value);
}
