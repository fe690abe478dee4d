import { isObject } from './dialect.js';

/**
 * Whether a chat body (OpenAI chat completions or Anthropic messages) ends with an assistant
 * message: a prefill the model is asked to continue, which a `prefill-rejected` phase refuses.
 */
export function endsWithPrefill(body: unknown): boolean {
  if (!isObject(body) || !Array.isArray(body.messages)) return false;
  const last: unknown = body.messages[body.messages.length - 1];
  return isObject(last) && last.role === 'assistant';
}
