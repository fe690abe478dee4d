import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { proxyTo, serveUpstream, until } from './proxy-harness.js';

const BODY = JSON.stringify({ model: 'a', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

describe('stormlab proxy: added latency in front of an upstream whose own latency it does not know', () => {
  it('latency addMs holds the answer that long after the upstream gave it', async () => {
    const fu = await serveUpstream();
    const clock = new ManualClock(0);
    const proxy = await proxyTo(fu.url, {
      clock,
      random: new SeededRandom(1),
      faults: [{ kind: 'latency', addMs: 5000 }],
    });
    let answered = false;
    const res = request(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: BODY }).then((r) => {
      answered = true;
      return r;
    });
    await until(() => fu.stats().routes[0]?.status['200'] === 1, 'the upstream answered');
    clock.advance(4999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    clock.advance(1);
    const r = await res;
    expect(r.statusCode).toBe(200);
    expect(JSON.parse(await r.body.text()).choices[0].message.content).toBeTruthy();
  });

  it('slow-first-token addMs: the stream opens at once, its first token waits', async () => {
    const fu = await serveUpstream();
    const clock = new ManualClock(0);
    const proxy = await proxyTo(fu.url, { clock, faults: [{ kind: 'slow-first-token', addMs: 3000 }] });
    const r = await request(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-stormlab-output-tokens': '4' },
      body: JSON.stringify({ model: 'a', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.statusCode).toBe(200);
    const chunks: string[] = [];
    r.body.on('data', (c: Buffer) => chunks.push(c.toString()));
    const done = new Promise((resolve) => r.body.on('end', resolve));
    await until(
      () => fu.stats().routes[0]?.status['200'] === 1 && chunks.length > 0,
      'the upstream done, the opening event through',
    );
    // Before the hold: the role chunk only, no content yet.
    expect(chunks.join('')).not.toContain('"content":"the');
    clock.advance(3000);
    await done;
    expect(chunks.join('')).toContain('data: [DONE]');
    expect(proxy.requests()[0].fault).toBe('SlowFirstToken');
  });
});
