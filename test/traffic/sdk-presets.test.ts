import { describe, expect, it } from 'vitest';
import { classify, classifyStatus } from '../../src/engine/classify.js';
import type { Random } from '../../src/engine/random.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { SDK_NAMES, SDK_PRESETS, sdkPreset, seenOf } from '../../src/traffic/sdk-presets.js';
import { edit, problemsOf } from '../scenario/helpers.js';

const fixed = (u: number): Random => ({ next: () => u });
const mid = fixed(0.5);
const s503 = seenOf(classifyStatus(503));
const s429 = seenOf(classifyStatus(429));
const hinted = (ms: number) => seenOf(classify({ status: 429, headers: { 'retry-after-ms': String(ms) } }));
const vetoed503 = seenOf(classify({ status: 503, headers: { 'x-should-retry': 'false' } }));
const reset = seenOf(classify({ error: { code: 'ECONNRESET', message: 'reset' } }));
const timedOut = seenOf(classify({ error: { name: 'TimeoutError', message: 'timed out' } }));
const quota = seenOf(
  classify({ status: 429, body: { error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'q' } } }),
);

/** Every delay a preset would wait through an outage, until it gives up. */
function schedule(name: (typeof SDK_NAMES)[number], seen = s503, random = mid, runnerRetries = 0) {
  const p = sdkPreset(name, SDK_PRESETS[name].maxRetries, runnerRetries);
  const out: number[] = [];
  for (let retry = 1; retry <= p.maxRetries; retry++) {
    const d = p.delay(retry, seen, random);
    if (d < 0) break;
    out.push(d);
  }
  return out;
}

describe('sdk presets: what each client library does through an outage of 503s', () => {
  it('openai and anthropic: 2 retries at 0.5 s and 1 s, minus up to 25 % jitter', () => {
    for (const name of ['openai', 'openai-v4', 'anthropic'] as const) {
      expect(schedule(name, s503, fixed(0))).toEqual([500, 1000]);
      expect(schedule(name, s503, fixed(1))).toEqual([375, 750]);
    }
  });

  it('vercel-ai: 2 retries at 2 s and 4 s, no jitter', () => {
    expect(schedule('vercel-ai', s503, fixed(0))).toEqual([2000, 4000]);
    expect(schedule('vercel-ai', s503, fixed(1))).toEqual([2000, 4000]);
  });

  it('langchain: 6 retries, 1–2 s doubling (7 attempts over 63–126 s)', () => {
    expect(schedule('langchain', s503, fixed(0))).toEqual([1000, 2000, 4000, 8000, 16000, 32000]);
    expect(schedule('langchain', s503, fixed(0.999)).reduce((a, b) => a + b)).toBeCloseTo(126_000, -3);
  });

  it('openai-agents: the OpenAI client’s retries, then the runner’s one-attempt retries when configured', () => {
    expect(schedule('openai-agents', s503, fixed(0))).toEqual([500, 1000]);
    expect(schedule('openai-agents', s503, fixed(0.5), 3)).toEqual([437.5, 875, 250, 500, 1000]);
  });
});

describe('sdk presets: the answers each library reads differently', () => {
  it('x-should-retry: false stops the Stainless SDKs and the Agents runner, not Vercel AI or LangChain', () => {
    for (const name of ['openai', 'openai-v4', 'anthropic', 'openai-agents'] as const)
      expect(SDK_PRESETS[name].delay(1, vetoed503, mid)).toBe(-1);
    expect(SDK_PRESETS['vercel-ai'].delay(1, vetoed503, mid)).toBe(2000);
    expect(SDK_PRESETS.langchain.delay(1, vetoed503, fixed(0))).toBe(1000);
  });

  it('a 429 without a hint: retried with backoff by all but LangChain, which gives up', () => {
    expect(SDK_PRESETS.openai.delay(1, s429, fixed(0))).toBe(500);
    expect(SDK_PRESETS['vercel-ai'].delay(1, s429, mid)).toBe(2000);
    expect(SDK_PRESETS.langchain.delay(1, s429, mid)).toBe(-1);
  });

  it('a 90 s hint: openai ≥ 6.26 and anthropic wait it out, openai < 6.26 and vercel use their backoff, langchain gives up', () => {
    const h = hinted(90_000);
    expect(SDK_PRESETS.openai.delay(1, h, mid)).toBe(90_000);
    expect(SDK_PRESETS.anthropic.delay(1, h, mid)).toBe(90_000);
    expect(SDK_PRESETS['openai-v4'].delay(1, h, fixed(0))).toBe(500);
    expect(SDK_PRESETS['vercel-ai'].delay(1, h, mid)).toBe(2000);
    expect(SDK_PRESETS.langchain.delay(1, h, mid)).toBe(-1);
  });

  it('a short hint is waited out; LangChain waits the longer of it and its backoff', () => {
    const h = hinted(300);
    for (const name of ['openai', 'openai-v4', 'anthropic', 'vercel-ai', 'openai-agents'] as const)
      expect(SDK_PRESETS[name].delay(1, h, mid)).toBe(300);
    expect(SDK_PRESETS.langchain.delay(1, h, fixed(0))).toBe(1000);
    expect(SDK_PRESETS.langchain.delay(1, hinted(5000), fixed(0))).toBe(5000);
  });

  it('insufficient_quota: the Stainless SDKs retry any 429; LangChain knows better', () => {
    expect(SDK_PRESETS.openai.delay(1, quota, fixed(0))).toBe(500);
    expect(SDK_PRESETS.langchain.delay(1, quota, mid)).toBe(-1);
  });

  it('connection errors are retried by all; a timeout is an abort to Vercel AI', () => {
    for (const name of SDK_NAMES) expect(SDK_PRESETS[name].delay(1, reset, mid)).toBeGreaterThan(0);
    expect(SDK_PRESETS['vercel-ai'].delay(1, timedOut, mid)).toBe(-1);
    expect(SDK_PRESETS.openai.delay(1, timedOut, mid)).toBeGreaterThan(0);
    expect(SDK_PRESETS.langchain.delay(1, timedOut, mid)).toBeGreaterThan(0);
  });

  it('caller errors end the call everywhere (LangChain’s list includes 409, the SDKs retry it)', () => {
    for (const name of SDK_NAMES) {
      for (const status of [400, 401, 403, 404])
        expect(SDK_PRESETS[name].delay(1, seenOf(classifyStatus(status)), mid)).toBe(-1);
    }
    expect(SDK_PRESETS.openai.delay(1, seenOf(classifyStatus(409)), fixed(0))).toBe(500);
    expect(SDK_PRESETS.langchain.delay(1, seenOf(classifyStatus(409)), mid)).toBe(-1);
  });
});

describe('sdk presets in a scenario', () => {
  it('retry.sdk picks the preset and its maxRetries; openai when absent', () => {
    const retry = (to: string) => loadScenario(edit('retry: { policy: sdk }', to)).traffic.layers[1].retry;
    expect(retry('retry: { policy: sdk }')).toEqual({ policy: 'sdk', sdk: 'openai', maxRetries: 2, runnerRetries: 0 });
    expect(retry('retry: { policy: sdk, sdk: langchain }')).toEqual({
      policy: 'sdk',
      sdk: 'langchain',
      maxRetries: 6,
      runnerRetries: 0,
    });
    expect(retry('retry: { policy: sdk, sdk: openai-agents, runnerRetries: 3, maxRetries: 1 }')).toEqual({
      policy: 'sdk',
      sdk: 'openai-agents',
      maxRetries: 1,
      runnerRetries: 3,
    });
  });

  it('a misspelt library is one line naming the path and the choices', () => {
    expect(problemsOf(edit('retry: { policy: sdk }', 'retry: { policy: sdk, sdk: langchian }'))).toEqual([
      'layers[1].retry.sdk: expected one of openai, openai-v4, anthropic, vercel-ai, langchain, openai-agents, got "langchian" (did you mean langchain?)',
    ]);
    expect(problemsOf(edit('retry: { policy: sdk }', 'retry: { policy: sdk, runnerRetries: -1 }'))).toEqual([
      'layers[1].retry.runnerRetries: expected an integer from 0 to 100, got -1',
    ]);
  });
});
