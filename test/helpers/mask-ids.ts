/** An id as the fake upstream gives them out (`providerIds`): a provider's prefix and random characters. */
const ID = /(chatcmpl-|call_|toolu_01|msg_01|msg_|resp_|fc_|emb-)[A-Za-z0-9]{20,}/g;

/** Every id in a body or SSE text as `<prefix><id>`: what stays is what a seed decides. */
export function maskIds(text: string): string {
  return text.replace(ID, '$1<id>');
}

/** The ids in a body or SSE text, each once per time it is given out (a text may repeat one). */
export function idsIn(text: string): string[] {
  return text.match(ID) ?? [];
}
