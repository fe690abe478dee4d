import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { charsPerToken, estimateChatTokens, type TokenEstimator } from '../../src/engine/token-estimator.js';
import { OptionError } from '../../src/engine/errors.js';

describe('charsPerToken', () => {
  it('rounds length / chars up, 3 characters by default', () => {
    const e = charsPerToken();
    expect(e.estimate('')).toBe(0);
    expect(e.estimate('abc')).toBe(1);
    expect(e.estimate('abcd')).toBe(2);
    expect(charsPerToken(4).estimate('abcdefgh')).toBe(2);
    expect(charsPerToken(4).estimate('abcdefghi')).toBe(3);
  });

  it('rejects a ratio that is not > 0', () => {
    expect(() => charsPerToken(0)).toThrow(OptionError);
    expect(() => charsPerToken(-1)).toThrow(/charsPerToken\.chars must be a number > 0, got -1/);
  });

  it('never under-counts characters / chars', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 8 }), (text, chars) => {
        const n = charsPerToken(chars).estimate(text);
        expect(n * chars).toBeGreaterThanOrEqual(text.length);
        expect((n - 1) * chars).toBeLessThan(text.length === 0 ? 1 : text.length);
      }),
    );
  });
});

describe('estimateChatTokens', () => {
  it('adds message text, 4 tokens per message and max_tokens', () => {
    const req = { messages: [{ content: 'abcdef' }, { content: 'abc' }], max_tokens: 100 };
    // ceil(6/3) + 4 + ceil(3/3) + 4 + 100
    expect(estimateChatTokens(req)).toBe(111);
  });

  it('uses the default max output when the request sets none', () => {
    expect(estimateChatTokens({ messages: [{ content: 'abc' }] })).toBe(1 + 4 + 1024);
    expect(estimateChatTokens({ messages: [{ content: 'abc' }] }, undefined, 10)).toBe(1 + 4 + 10);
  });

  it('reads max_completion_tokens and max_output_tokens, taking the largest bound given', () => {
    expect(estimateChatTokens({ max_completion_tokens: 50 })).toBe(50);
    expect(estimateChatTokens({ max_output_tokens: 70 })).toBe(70);
    expect(estimateChatTokens({ max_tokens: 10, max_completion_tokens: 30 })).toBe(30);
    expect(estimateChatTokens({ max_tokens: 0 }, undefined, 500)).toBe(0);
  });

  it('counts text parts (and nested tool-result content) and ignores other parts', () => {
    const req = {
      messages: [
        {
          content: [
            { type: 'text', text: 'abcabc' },
            { type: 'image_url', image_url: { url: 'x'.repeat(300) } },
          ],
        },
        { content: [{ type: 'tool_result', content: [{ type: 'text', text: 'abc' }] }] },
        { content: null },
      ],
      max_tokens: 0,
    };
    // (2 + 4) + (1 + 4) + (0 + 4)
    expect(estimateChatTokens(req)).toBe(15);
  });

  it('counts a completions prompt and an Anthropic system prompt', () => {
    expect(estimateChatTokens({ prompt: 'abcabcabc', max_tokens: 1 })).toBe(4);
    expect(estimateChatTokens({ system: 'abcabc', messages: [{ content: 'abc' }], max_tokens: 0 })).toBe(2 + 4 + 1 + 4);
  });

  it('uses the estimator it is given (room for a real tokenizer)', () => {
    const words: TokenEstimator = { estimate: (t) => t.split(/\s+/).filter(Boolean).length };
    expect(estimateChatTokens({ messages: [{ content: 'one two three' }], max_tokens: 5 }, words)).toBe(3 + 4 + 5);
  });

  it('rejects a bad default', () => {
    expect(() => estimateChatTokens({}, undefined, -1)).toThrow(
      /estimateChatTokens\.defaultMaxTokens must be a number >= 0, got -1/,
    );
  });
});
