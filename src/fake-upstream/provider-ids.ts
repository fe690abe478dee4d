import { randomFillSync } from 'node:crypto';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

/** OS randomness, drawn a block at a time (an id costs a few bytes of it, not a system call). */
const pool = Buffer.alloc(4096);
let at = pool.length;

function byte(): number {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  return pool[at++];
}

/** `prefix` and `length` characters of `alphabet` drawn from OS randomness (rejection sampling: every character equally likely). */
function randomId(prefix: string, length: number, alphabet: string): string {
  const limit = 256 - (256 % alphabet.length);
  let s = prefix;
  for (let n = 0; n < length; ) {
    const b = byte();
    if (b >= limit) continue;
    s += alphabet[b % alphabet.length];
    n++;
  }
  return s;
}

/**
 * Ids as the providers shape them: opaque, random (never drawn from the seed, so two servers
 * or two runs with the same seed never give out the same id; everything else stays seeded).
 * OpenAI chat completions `chatcmpl-` and tool calls `call_` (alphanumeric); Anthropic
 * messages `msg_01…` and tool uses `toolu_01…`; the Responses API's `resp_`, `msg_`, `fc_` and,
 * for the other input items a stored conversation lists, `item_` (hex, as OpenAI's).
 */
export const providerIds = {
  chatCompletion: (): string => randomId('chatcmpl-', 29, ALNUM),
  openaiToolCall: (): string => randomId('call_', 24, ALNUM),
  anthropicMessage: (): string => randomId('msg_01', 22, ALNUM),
  anthropicToolUse: (): string => randomId('toolu_01', 22, ALNUM),
  response: (): string => randomId('resp_', 48, HEX),
  responseMessage: (): string => randomId('msg_', 48, HEX),
  functionCall: (): string => randomId('fc_', 48, HEX),
  responseItem: (): string => randomId('item_', 48, HEX),
  embeddings: (): string => randomId('emb-', 24, ALNUM),
};
