import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, OpenAIChatCompletionsModel, retryPolicies, run, setTracingDisabled } from '@openai/agents';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { Random } from '../../src/engine/random.js';
import { SDK_PRESETS, type SdkName, sdkPreset } from '../../src/traffic/sdk-presets.js';
import { fast, start } from '../fake-upstream/harness.js';

// Each client library, run for real against the fake upstream through a failure, must make the
// attempts its simulated preset makes, spaced within the preset's jitter bounds. Real time:
// the libraries sleep with their own timers (about 25 s in all).

setTracingDisabled(true);
const MODELS = [fast('gpt-4o-mini'), fast('claude-3-5-haiku-latest')];
const KEY = 'test-key';
/** Time between an answer and the next request that is not the library's wait: loopback, parsing. */
const SLACK_MS = 250;

interface Failure {
  status: number;
  retryAfterMs?: number;
}

/** Runs `call` against a fake upstream failing every request; returns the request arrival times. */
async function arrivals(failure: Failure, call: (url: string) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  const h = await start(
    {
      models: MODELS,
      faults: [{ kind: 'errors', fromMs: 0, status: failure.status, retryAfterMs: failure.retryAfterMs }],
    },
    { observer: { submitted: () => void times.push(performance.now()) } },
  );
  await expect(call(h.url)).rejects.toBeTruthy();
  return times;
}

const bound = (u: number): Random => ({ next: () => u });

/** The preset's schedule through the same failure: the lowest and highest wait before each retry. */
function expected(name: SdkName, failure: Failure, maxRetries?: number, runnerRetries = 0) {
  const p = sdkPreset(name, maxRetries ?? SDK_PRESETS[name].maxRetries, runnerRetries);
  const seen = {
    status: failure.status,
    network: false,
    timeout: false,
    quota: false,
    vetoed: false,
    hintMs: failure.retryAfterMs,
  };
  const waits: Array<[number, number]> = [];
  for (let retry = 1; retry <= p.maxRetries; retry++) {
    const lo = p.delay(retry, seen, bound(0));
    const hi = p.delay(retry, seen, bound(0.999_999));
    if (lo < 0) break;
    waits.push([Math.min(lo, hi), Math.max(lo, hi)]);
  }
  return waits;
}

function expectSpacing(times: number[], waits: Array<[number, number]>) {
  expect(times.length).toBe(waits.length + 1);
  waits.forEach(([lo, hi], i) => {
    const gap = times[i + 1] - times[i];
    expect(gap, `wait before retry ${i + 1}`).toBeGreaterThanOrEqual(lo - 5);
    expect(gap, `wait before retry ${i + 1}`).toBeLessThanOrEqual(hi + SLACK_MS);
  });
}

const user = [{ role: 'user' as const, content: 'Say something about retry storms.' }];

const CLIENTS: Record<Exclude<SdkName, 'openai-v4'>, (url: string) => Promise<unknown>> = {
  openai: (url) =>
    new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY }).chat.completions.create({ model: 'gpt-4o-mini', messages: user }),
  anthropic: (url) =>
    new Anthropic({ baseURL: url, apiKey: KEY }).messages.create({
      model: 'claude-3-5-haiku-latest',
      max_tokens: 16,
      messages: user,
    }),
  'vercel-ai': (url) =>
    generateText({ model: createOpenAI({ baseURL: `${url}/v1`, apiKey: KEY }).chat('gpt-4o-mini'), prompt: 'Hi' }),
  langchain: (url) =>
    new ChatOpenAI({
      model: 'gpt-4o-mini',
      apiKey: KEY,
      maxRetries: 2,
      configuration: { baseURL: `${url}/v1` },
    }).invoke('Hi'),
  'openai-agents': (url) =>
    run(
      new Agent({
        name: 'a',
        instructions: 'Answer.',
        model: new OpenAIChatCompletionsModel(new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY }), 'gpt-4o-mini'),
      }),
      'Hi',
    ),
};

describe('sdk presets match the real packages (slow: real timers)', () => {
  const outage: Failure = { status: 503 };

  for (const name of ['openai', 'anthropic', 'vercel-ai', 'openai-agents'] as const) {
    it(`${name}: attempts and spacing through an outage, as shipped`, async () => {
      expectSpacing(await arrivals(outage, CLIENTS[name]), expected(name, outage));
    });
  }

  it('langchain (maxRetries 2, to keep the test short): attempts and spacing through an outage', async () => {
    expectSpacing(await arrivals(outage, CLIENTS.langchain), expected('langchain', outage, 2));
  });

  it('langchain: a 429 without retry-after ends the call at once; the SDKs retry it', async () => {
    const noHint: Failure = { status: 429 };
    expect(expected('langchain', noHint, 2)).toEqual([]);
    expectSpacing(await arrivals(noHint, CLIENTS.langchain), []);
    expectSpacing(await arrivals(noHint, CLIENTS.openai), expected('openai', noHint));
  });

  it('a 429 with a 300 ms hint: openai waits it out, vercel-ai too, langchain waits its longer backoff', async () => {
    const hint: Failure = { status: 429, retryAfterMs: 300 };
    expectSpacing(await arrivals(hint, CLIENTS.openai), expected('openai', hint));
    expectSpacing(await arrivals(hint, CLIENTS['vercel-ai']), expected('vercel-ai', hint));
    expectSpacing(await arrivals(hint, CLIENTS.langchain), expected('langchain', hint, 2));
  });

  it('vercel-ai on the Anthropic provider retries the same way', async () => {
    const anthropic = (url: string) =>
      generateText({
        model: createAnthropic({ baseURL: `${url}/v1`, apiKey: KEY })('claude-3-5-haiku-latest'),
        prompt: 'Hi',
      });
    expectSpacing(await arrivals(outage, anthropic), expected('vercel-ai', outage));
  });

  it('openai-agents with runner retries: the client’s 3 attempts, then one attempt per runner retry', async () => {
    const agent = (url: string) =>
      run(
        new Agent({
          name: 'a',
          instructions: 'Answer.',
          model: new OpenAIChatCompletionsModel(new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY }), 'gpt-4o-mini'),
          modelSettings: { retry: { maxRetries: 2, policy: retryPolicies.providerSuggested() } },
        }),
        'Hi',
      );
    expectSpacing(await arrivals(outage, agent), expected('openai-agents', outage, 2, 2));
  });
});
