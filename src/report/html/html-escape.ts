const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and attribute values: a scenario named `<b>` shows as `<b>`. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * JSON to embed in `<script type="application/json">`. Every `<` becomes `\u003c` (the
 * same string to JSON.parse), so no value — a scenario named `</script>` — can end the
 * element or open a comment. U+2028/2029 are escaped too, for readers that eval.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
