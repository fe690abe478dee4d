import { providerIds } from './provider-ids.js';
import { hashSeed, SeededRandom } from '../engine/random.js';
import { estimateChatTokens } from '../engine/token-estimator.js';
import { describeType, isObject, type Dialect, type Invalid, type Parsed } from './dialect.js';
import { openaiDialect } from './openai-dialect.js';

/** text-embedding-3-small's length, what clients expect when they ask for none. */
const EMBEDDING_DIMENSIONS = 1536;
const MAX_DIMENSIONS = 3072;
const MAX_INPUTS = 2048;

const bad = (message: string, param: string | null, code: string | null = null): Invalid => ({
  status: 400,
  message,
  param,
  code,
});

/** The inputs as texts: a string, strings, or token arrays (one or many). */
function inputsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((x) => typeof x === 'number')) return [input.join(' ')];
  if (input.every((x) => typeof x === 'string')) return input as string[];
  if (input.every((x) => Array.isArray(x) && x.every((t) => typeof t === 'number')))
    return (input as number[][]).map((t) => t.join(' '));
  return undefined;
}

function parse(body: unknown): Parsed {
  const fail = (e: Invalid): Parsed => ({ ok: false, ...e });
  if (!isObject(body))
    return fail(bad(`Invalid body: expected a JSON object, but got ${describeType(body)} instead.`, null));
  const { model, input, encoding_format: format, dimensions } = body;
  if (model === undefined || model === null)
    return fail(bad('you must provide a model parameter', 'model', 'missing_required_parameter'));
  if (typeof model !== 'string')
    return fail(bad(`Invalid type for 'model': expected a string.`, 'model', 'invalid_type'));
  if (input === undefined)
    return fail(bad("Missing required parameter: 'input'.", 'input', 'missing_required_parameter'));
  const texts = inputsOf(input);
  if (texts === undefined || texts.length > MAX_INPUTS)
    return fail(
      bad(
        `Invalid 'input': expected a string, an array of 1 to ${MAX_INPUTS} strings, or token arrays.`,
        'input',
        'invalid_value',
      ),
    );
  if (format !== undefined && format !== 'float' && format !== 'base64')
    return fail(bad(`Invalid 'encoding_format': expected "float" or "base64".`, 'encoding_format', 'invalid_value'));
  if (
    dimensions !== undefined &&
    (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS)
  )
    return fail(
      bad(`Invalid 'dimensions': expected an integer from 1 to ${MAX_DIMENSIONS}.`, 'dimensions', 'invalid_value'),
    );
  const messages = texts.map((content) => ({ content }));
  // One output token: the model's service is then about its time to first token.
  return {
    ok: true,
    chat: {
      model,
      promptTokens: estimateChatTokens({ messages }, undefined, 0),
      maxTokens: 1,
      choices: 1,
      stream: false,
      includeUsage: false,
    },
  };
}

/** `POST /v1/embeddings`: OpenAI's request checks and errors; the answer is built by `embeddingsReply`. */
export const embeddingsDialect: Dialect = { ...openaiDialect, newId: providerIds.embeddings, parse };

/**
 * The embeddings of `body`'s inputs: unit vectors drawn from each text (the same text gives the
 * same vector), as floats or, as the OpenAI SDK asks by default, base64 of little-endian float32.
 */
export function embeddingsReply(body: Record<string, unknown>): Dialect {
  const texts = inputsOf(body.input) ?? [];
  const dims = typeof body.dimensions === 'number' ? body.dimensions : EMBEDDING_DIMENSIONS;
  const base64 = body.encoding_format === 'base64';
  return {
    ...embeddingsDialect,
    completion: (a) => ({
      object: 'list',
      data: texts.map((t, index) => {
        const v = embedding(t, dims);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : Array.from(v),
        };
      }),
      model: a.model,
      usage: { prompt_tokens: a.promptTokens, total_tokens: a.promptTokens },
    }),
  };
}

function embedding(text: string, dims: number): Float32Array {
  const r = new SeededRandom(hashSeed(text));
  const v = new Float32Array(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    v[i] = r.next() * 2 - 1;
    norm += v[i] * v[i];
  }
  const scale = 1 / Math.sqrt(norm || 1);
  for (let i = 0; i < dims; i++) v[i] *= scale;
  return v;
}
