import { describe, expect, it } from 'vitest';
import { classify } from '../../src/engine/classify.js';
import { charsPerToken, estimateChatTokens } from '../../src/engine/token-estimator.js';
import { answerResult } from '../../src/integrations/http-answer.js';
import { estimateRequestTokens, isStreamRequest, readJsonBody } from '../../src/integrations/request-estimate.js';
import { SseUsage, usageFromBody, usageOf } from '../../src/integrations/response-usage.js';

const enc = new TextEncoder();

describe('usage of an answer', () => {
  it('reads OpenAI, Responses API and Anthropic shapes', () => {
    expect(usageOf({ usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })).toBe(7);
    expect(usageOf({ usage: { prompt_tokens: 3, completion_tokens: 4 } })).toBe(7);
    expect(usageOf({ usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } })).toBe(15);
    expect(usageOf({ usage: { input_tokens: 10, output_tokens: 5 } })).toBe(15);
    expect(usageOf({ usage: null })).toBeUndefined();
    expect(usageOf({ choices: [] })).toBeUndefined();
    expect(usageOf({ usage: { total_tokens: -1 } })).toBeUndefined();
  });

  it('parses bodies only when they mention usage', () => {
    expect(usageFromBody(enc.encode('{"usage":{"total_tokens":9}}'))).toBe(9);
    expect(usageFromBody(enc.encode('{"ok":true}'))).toBeUndefined();
    expect(usageFromBody('{"usage": broken')).toBeUndefined();
  });

  it('follows an SSE stream split anywhere, multi-byte characters included', () => {
    const text =
      'data: {"choices":[{"delta":{"content":"€uro"}}],"usage":null}\n\ndata: {"choices":[],"usage":{"total_tokens":12}}\n\ndata: [DONE]\n\n';
    const bytes = enc.encode(text);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const sse = new SseUsage();
      sse.push(bytes.subarray(0, cut));
      sse.push(bytes.subarray(cut));
      expect(sse.total()).toBe(12);
    }
  });

  it('reads a final event without a trailing newline, and says undefined when there is no usage', () => {
    const sse = new SseUsage();
    sse.push(enc.encode('data: {"usage":{"prompt_tokens":2,"completion_tokens":3}}'));
    expect(sse.total()).toBe(5);
    const none = new SseUsage();
    none.push(enc.encode('data: {"choices":[]}\n\n'));
    expect(none.total()).toBeUndefined();
  });
});

describe('request estimate', () => {
  it('is estimateChatTokens of a chat body, plus a string input, 0 for other bodies', () => {
    const chat = { model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 10 };
    expect(estimateRequestTokens(readJsonBody(JSON.stringify(chat)), undefined)).toBe(estimateChatTokens(chat));
    expect(estimateRequestTokens(chat, charsPerToken(1))).toBe(estimateChatTokens(chat, charsPerToken(1)));
    expect(estimateRequestTokens({ model: 'e', input: 'abcdef', max_output_tokens: 0 }, undefined)).toBe(2);
    expect(estimateRequestTokens({ name: 'not an llm call' }, undefined)).toBe(0);
    expect(estimateRequestTokens(undefined, undefined)).toBe(0);
  });

  it('reads JSON objects only', () => {
    expect(readJsonBody(enc.encode(' {"stream":true}'))).toEqual({ stream: true });
    expect(readJsonBody('[1,2]')).toBeUndefined();
    expect(readJsonBody('{oops')).toBeUndefined();
    expect(readJsonBody(undefined)).toBeUndefined();
    expect(isStreamRequest({ stream: true })).toBe(true);
    expect(isStreamRequest({ stream: 'yes' })).toBe(false);
  });
});

describe('answerResult', () => {
  it('parses small JSON error bodies so classify sees the provider code', () => {
    const quota = answerResult(429, {}, enc.encode('{"error":{"code":"insufficient_quota","message":"quota"}}'));
    expect(classify(quota).class).toBe('quota_exhausted');
    expect(classify(answerResult(400, {}, 'prompt is too long: 300000 tokens')).class).toBe('context_length');
    expect(answerResult(200, {}, enc.encode('{"error":"ignored on success"}'))).toEqual({ status: 200, headers: {} });
  });
});
