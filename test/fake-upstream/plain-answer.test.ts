import { describe, expect, it } from 'vitest';
import { anthropicDialect } from '../../src/fake-upstream/anthropic-dialect.js';
import type { AnswerInfo, Dialect } from '../../src/fake-upstream/dialect.js';
import { fillerText } from '../../src/fake-upstream/filler-text.js';
import { openaiDialect } from '../../src/fake-upstream/openai-dialect.js';
import {
  deltaTemplate,
  plainAnswerAscii,
  plainCompletionJson,
  plainStreamClose,
  plainStreamOpen,
} from '../../src/fake-upstream/plain-answer.js';

const info = (id: string, over: Partial<AnswerInfo> = {}): AnswerInfo => ({
  id,
  model: 'primary',
  created: 1_700_000_000,
  promptTokens: 100,
  includeUsage: false,
  ...over,
});

describe('plainCompletionJson', () => {
  it('is the dialect completion serialised, byte for byte, for every id sharing a template', () => {
    for (const dialect of [openaiDialect, anthropicDialect]) {
      for (const [id, over] of [
        ['chatcmpl-1', {}],
        ['chatcmpl-2', {}],
        ['chatcmpl-3', { created: 1_700_000_001 }],
        ['chatcmpl-4', { model: 'other "quoted"' }],
        ['chatcmpl-5', { promptTokens: 7, includeUsage: true }],
      ] as const) {
        const a = info(id, over);
        for (const words of [0, 1, 16]) {
          const expected = JSON.stringify(dialect.completion(a, fillerText(0, words), words + 3));
          expect(plainCompletionJson(dialect, a, words, words + 3)).toBe(expected);
        }
      }
    }
  });

  it('tells consecutive answers apart by every field the template depends on', () => {
    const base = info('chatcmpl-a');
    const changes: Array<Partial<AnswerInfo>> = [
      { model: 'other' },
      { created: base.created + 1 },
      { promptTokens: 9 },
      { includeUsage: true },
    ];
    for (const change of changes) {
      for (const [dialect, a, words, completion] of [
        [openaiDialect, base, 4, 4],
        [openaiDialect, { ...base, ...change }, 4, 4],
        [anthropicDialect, base, 4, 4],
        [openaiDialect, base, 5, 4],
        [openaiDialect, base, 5, 6],
        [openaiDialect, base, 4, 4],
      ] as const) {
        const expected = JSON.stringify(dialect.completion(a, fillerText(0, words), completion));
        expect(plainCompletionJson(dialect, a, words, completion)).toBe(expected);
      }
    }
  });

  it('serialises as before a body that does not carry its id', () => {
    const noId: Dialect = { ...openaiDialect, name: 'anthropic', completion: (a) => ({ n: a.promptTokens }) };
    expect(plainCompletionJson(noId, info('x-1'), 2, 2)).toBe('{"n":100}');
  });
});

describe('plainStreamOpen and plainStreamClose', () => {
  it('are the dialect events, byte for byte, whatever changes from one stream to the next', () => {
    const base = info('chatcmpl-s1');
    const streams: AnswerInfo[] = [
      base,
      info('chatcmpl-s2'),
      info('chatcmpl-s3', { model: 'other' }),
      info('chatcmpl-s4', { created: base.created + 1 }),
      info('chatcmpl-s5', { includeUsage: true }),
      info('chatcmpl-s6', { promptTokens: 3, includeUsage: true }),
      info('chatcmpl-s7'),
    ];
    for (const dialect of [openaiDialect, anthropicDialect])
      for (const a of streams)
        for (const completion of [1, 16, 16, 40]) {
          expect(plainStreamOpen(dialect, a)).toBe(dialect.streamOpen(a));
          expect(plainStreamClose(dialect, a, completion)).toBe(dialect.streamClose(a, completion));
        }
  });
});

describe('deltaTemplate', () => {
  it('builds each chunk as the dialect does, text escaped as JSON escapes it', () => {
    for (const dialect of [openaiDialect, anthropicDialect]) {
      for (const a of [info('chatcmpl-9'), info('chatcmpl-10', { includeUsage: true, model: 'm"x' })]) {
        const delta = deltaTemplate(dialect, a);
        expect(delta).not.toBeNull();
        for (const text of [
          '',
          'the storm',
          ' passes "quoted"\n\u0001 on',
          'back\\slash',
          'lone \ud800 half',
          'pair 🌩',
        ])
          expect(delta!(text)).toBe(dialect.streamDelta(a, text));
      }
    }
  });

  it('is null for a chunk that does not carry its text once', () => {
    expect(deltaTemplate({ ...openaiDialect, streamDelta: (_a, t) => `${t}${t}` }, info('x'))).toBeNull();
  });
});

describe('plainAnswerAscii', () => {
  it('is true only where the dialect and the model name are ASCII, whatever came before', () => {
    const accented: Dialect = { ...openaiDialect, streamOpen: (a) => `data: {"note":"café","id":"${a.id}"}\n\n` };
    expect(
      [
        [openaiDialect, 'primary'],
        [anthropicDialect, 'primary'],
        [openaiDialect, 'modèle'],
        [openaiDialect, 'primary'],
        [accented, 'primary'],
        [openaiDialect, '雷'],
      ].map(([d, model]) => plainAnswerAscii(d as Dialect, info('chatcmpl-1', { model: model as string }))),
    ).toEqual([true, true, false, true, false, false]);
  });
});
