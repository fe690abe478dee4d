import { isObject } from './dialect.js';

/**
 * Whether a chat body (OpenAI chat completions or Anthropic messages) ends with an assistant
 * message: a prefill the model is asked to continue. A model that declares `continuation:
 * prefill` continues it; any other model (or one in a `prefill-rejected` phase) answers 400.
 */
export function endsWithPrefill(body: unknown): boolean {
  if (!isObject(body) || !Array.isArray(body.messages)) return false;
  const last: unknown = body.messages[body.messages.length - 1];
  return isObject(last) && last.role === 'assistant';
}

/**
 * The text of a chat body's trailing assistant message (its string content, or its text parts /
 * blocks joined, as OpenAI and Anthropic both allow), or undefined when the body does not end
 * with one.
 */
export function prefillText(body: unknown): string | undefined {
  if (!endsWithPrefill(body)) return undefined;
  const messages = (body as { messages: unknown[] }).messages;
  const content = (messages[messages.length - 1] as Record<string, unknown>).content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (isObject(part) && typeof part.text === 'string') text += part.text;
  return text;
}

/**
 * How many words of the model's answer a prefill already holds: its whitespace-separated words.
 * The fake upstream's answers are filler words (one token each), so a continuation starts at that
 * word, and the prefill plus the continuation is the answer the model would have given whole.
 */
export function prefillWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13);
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}
