/**
 * The request header that sets the length of a fake upstream's answer: `max` (the answer is
 * exactly `max_tokens` long and ends with `stop` / `end_turn`: what the harness's live driver
 * sends, so its requests are served as the simulator serves them) or a number of tokens (the
 * answer's natural length: that many tokens, or `max_tokens` with `finish_reason: length` when
 * it is larger). Without it an answer runs its model's `answerTokens`.
 */
export const OUTPUT_TOKENS_HEADER = 'x-stormlab-output-tokens';
