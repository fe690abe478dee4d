import { Guard, ShedError, systemClock, systemRandom, type Clock } from 'stormlab/engine';

// Stand-in for `openai.chat.completions.create`: throws errors shaped like the SDK's
// (status, headers, error body) — 429 twice, then an answer with its token usage.
let calls = 0;
async function createChatCompletion(req: {
  model: string;
  messages: { role: string; content: string }[];
  max_tokens: number;
}) {
  if (++calls <= 2) {
    throw Object.assign(new Error('Rate limit reached'), {
      status: 429,
      headers: { 'retry-after-ms': '200' },
      error: { type: 'requests', code: 'rate_limit_exceeded' },
    });
  }
  return { model: req.model, choices: [{ message: { content: 'Paris.' } }], usage: { total_tokens: 42 } };
}

export async function main(clock: Clock = systemClock) {
  const guard = new Guard({
    clock,
    random: systemRandom(),
    // Fallback chain of models: each has its own breaker and throttle.
    targets: [
      { name: 'gpt-4o', model: 'gpt-4o', contextWindow: 128_000 },
      { name: 'gpt-4o-mini', model: 'gpt-4o-mini', contextWindow: 128_000 },
    ],
    maxAttempts: 3, // per target
    retryBudget: { ratio: 0.1 }, // retries <= 10 % of first attempts (+1/s floor)
    throttle: { k: 2 }, // SRE adaptive throttling
    limits: [
      { name: 'tenant_rps', unit: 'requests', rate: 50, per: 'second', keyBy: 'tenant' },
      { name: 'model_tpm', unit: 'tokens', rate: 90_000, per: 'minute', keyBy: 'model' },
    ],
    timeoutMs: 30_000, // deadline for the whole call, retries and waits included
    onEvent: (e) =>
      console.log(`[stormlab] ${e.type}`, e.type === 'retry' ? `in ${e.delayMs} ms after ${e.class}` : ''),
  });

  const messages = [{ role: 'user', content: 'What is the capital of France?' }];
  try {
    const r = await guard.runDetailed(
      (ctx) => createChatCompletion({ model: ctx.target.model!, messages, max_tokens: 100 }),
      { tokens: 120, keys: { tenant: 'acme', model: 'gpt-4o' }, usage: (res) => res.usage.total_tokens },
    );
    console.log(
      `${r.value.choices[0].message.content} (model ${r.target}, ${r.attempts} attempts, degraded: ${r.degraded})`,
    );
    return r;
  } catch (err) {
    if (err instanceof ShedError) console.log(`shed locally: ${err.reason}, retry after ${err.retryAfterMs} ms`);
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
