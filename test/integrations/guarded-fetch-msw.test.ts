import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { estimateChatTokens } from '../../src/engine/token-estimator.js';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { chatBody, completion, engineSetup } from './scripted-server.js';

// msw intercepts the global fetch that guardedFetch wraps by default: no socket at all.
const ORIGIN = 'https://llm.example.test';
const PRIMARY = 'https://primary.example.test';
const SECONDARY = 'https://secondary.example.test';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Answers each request to `url` with the next of `replies`; counts what it saw. */
function script(url: string, replies: Array<() => Response>) {
  const seen: unknown[] = [];
  server.use(
    http.post(url, async ({ request }) => {
      seen.push(await request.json());
      return replies[Math.min(seen.length - 1, replies.length - 1)]();
    }),
  );
  return seen;
}

describe('guardedFetch, classified and reconciled against msw', () => {
  it('reserves the body estimate and reconciles to usage.total_tokens', async () => {
    script(`${ORIGIN}/v1/chat/completions`, [
      () => HttpResponse.json(completion('Paris.', { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 })),
    ]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({
      ...base,
      targets: [ORIGIN],
      limits: [{ name: 'tpm', unit: 'tokens', rate: 100_000, per: 'minute' }],
    });
    const res = await run(f(`${ORIGIN}/v1/chat/completions`, post(chatBody())));
    expect(res.status).toBe(200);
    expect(of('reserve')).toEqual([expect.objectContaining({ tokens: estimateChatTokens(chatBody() as never) })]);
    expect(of('reconcile')).toEqual([
      expect.objectContaining({ reserved: estimateChatTokens(chatBody() as never), actual: 42 }),
    ]);
  });

  it('classifies a 429 rate_limit_exceeded as retryable, honouring retry-after-ms, and refunds its tokens', async () => {
    const seen = script(`${ORIGIN}/v1/chat/completions`, [
      () =>
        HttpResponse.json(
          { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
          { status: 429, headers: { 'retry-after-ms': '750' } },
        ),
      () => HttpResponse.json(completion('ok')),
    ]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({
      ...base,
      targets: [ORIGIN],
      limits: [{ name: 'tpm', unit: 'tokens', rate: 100_000, per: 'minute' }],
    });
    const res = await run(f(`${ORIGIN}/v1/chat/completions`, post(chatBody())));
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(2);
    expect(of('retry')).toEqual([expect.objectContaining({ class: 'rate_limited', delayMs: 750 })]);
    expect(of('reconcile').map((e) => e.actual)).toEqual([0, 25]); // the refused attempt costs nothing
  });

  it('classifies insufficient_quota as not retryable here and falls back to the next origin', async () => {
    const first = script(`${PRIMARY}/v1/chat/completions`, [
      () =>
        HttpResponse.json(
          { error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
          { status: 429 },
        ),
    ]);
    const second = script(`${SECONDARY}/v1/chat/completions`, [() => HttpResponse.json(completion('from secondary'))]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [PRIMARY, SECONDARY] })(`${PRIMARY}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(200);
    expect(first).toHaveLength(1);
    expect(second).toHaveLength(1);
    expect(of('fallback')).toEqual([expect.objectContaining({ from: PRIMARY, to: SECONDARY, why: 'quota_exhausted' })]);
  });

  it('returns a 400 as it is, without retrying, and honours x-should-retry: false on a 503', async () => {
    const bad = script(`${ORIGIN}/v1/chat/completions`, [
      () =>
        HttpResponse.json({ error: { message: 'bad', type: 'invalid_request_error', code: null } }, { status: 400 }),
    ]);
    const { base, run } = engineSetup();
    const f = guardedFetch({ ...base, targets: [ORIGIN] });
    expect((await run(f(`${ORIGIN}/v1/chat/completions`, post(chatBody())))).status).toBe(400);
    expect(bad).toHaveLength(1);
    server.resetHandlers();
    const no = script(`${ORIGIN}/v1/chat/completions`, [
      () =>
        HttpResponse.json(
          { error: { message: 'down', type: 'server_error' } },
          { status: 503, headers: { 'x-should-retry': 'false' } },
        ),
    ]);
    expect((await run(f(`${ORIGIN}/v1/chat/completions`, post(chatBody())))).status).toBe(503);
    expect(no).toHaveLength(1);
  });
});
