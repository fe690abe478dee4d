import OpenAI from 'openai';
import { guardedFetch } from 'stormlab/undici';

// Start the fake upstream first: npx stormlab serve --port 8080
// and make half the calls fail with a 429 for 10 s:
//   curl -X PUT localhost:8080/_stormlab/faults \
//     -d '[{"kind":"errors","rate":0.5,"status":429,"retryAfterMs":300,"toMs":10000}]'
export async function main(baseURL = process.env.STORMLAB_URL ?? 'http://127.0.0.1:8080') {
  const fetch = guardedFetch({
    targets: [baseURL], // origins, in fallback order
    maxAttempts: 4,
    limits: [{ name: 'tpm', unit: 'tokens', rate: 200_000, per: 'minute' }],
    onEvent: (e) => {
      if (e.type === 'retry') console.log(`retry #${e.attempt} in ${Math.round(e.delayMs)} ms (${e.class})`);
      if (e.type === 'reconcile') console.log(`tokens: reserved ${e.reserved}, used ${e.actual}`);
    },
  });
  // The engine retries; the SDK must not retry on top of it (3 × 3 = 9 attempts per call).
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'any', fetch, maxRetries: 0 });
  const r = await client.chat.completions.create({
    model: 'primary',
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 50,
  });
  console.log(r.choices[0].message.content?.slice(0, 40), r.usage);
  return r;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
