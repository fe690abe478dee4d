import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { chatBody, engineSetup, useGuardedAgents, useScriptedServers } from './scripted-server.js';

const serve = useScriptedServers();
const guarded = useGuardedAgents();

/**
 * The reproduction: a provider that writes its JSON with a space after each colon
 * (Python's `json.dumps` defaults) sends the role, two tokens, a finish and a usage chunk, then
 * closes without `[DONE]`. Read by structure, that is a complete answer whose usage reconciles
 * the reservation — on both HTTP paths — not a `stream_cut` after the caller's whole answer.
 */
const spaced = [
  '{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}',
  '{"choices": [{"index": 0, "delta": {"content": "Par"}, "finish_reason": null}]}',
  '{"choices": [{"index": 0, "delta": {"content": "is."}, "finish_reason": null}]}',
  '{"choices":[{"delta":{},"finish_reason": "stop"}]}',
  '{"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37}}',
].map((d) => `data: ${d}\n\n`);
const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 100_000, per: 'minute' as const }];
const body = chatBody({ stream: true, max_tokens: 64 });

describe('a complete stream in spaced JSON, closed without [DONE]', () => {
  it('guardedFetch: the whole text, no in-band error, no retry, usage reconciled', async () => {
    const s = await serve([{ events: spaced }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: [s.origin], limits });
    const res = await run(f(`${s.origin}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(body) }));
    const text = await run(res.text());
    expect(text).toBe(spaced.join(''));
    expect(of('retry')).toEqual([]);
    expect(s.requests).toHaveLength(1);
    expect(of('reconcile')).toEqual([expect.objectContaining({ actual: 37 })]);
  });

  it('the undici interceptor: the same', async () => {
    const s = await serve([{ events: spaced }]);
    const { base, run, of } = engineSetup();
    const dispatcher = guarded({ ...base, targets: [s.origin], limits });
    const res = await run(
      request(`${s.origin}/v1/chat/completions`, {
        dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
    const text = await run(res.body.text());
    expect(text).toBe(spaced.join(''));
    expect(of('retry')).toEqual([]);
    expect(s.requests).toHaveLength(1);
    expect(of('reconcile')).toEqual([expect.objectContaining({ actual: 37 })]);
  });
});
