/**
 * Control characters: C0 (`\u0000`–`\u001f`, ESC and newline among them), DEL and C1
 * (`\u0080`–`\u009f`, CSI among them). In a name they could clear a terminal, set its title or
 * forge a line wherever the name is printed, so names holding one are refused at load and
 * names read back from a result file are escaped.
 */
const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';

/** A string holding no control character (also the JSON Schema's `pattern` for a name). */
export const NO_CONTROL_CHARS = new RegExp(`^[^${CONTROL}]*$`);

const ANY_CONTROL = new RegExp(`[${CONTROL}]`, 'g');

/**
 * `s` with each control character written as a JSON string escape (`\n`, `\u001b`; DEL and C1
 * too, which JSON.stringify leaves raw): printable, and it still says what was there.
 */
export function escapeControls(s: string): string {
  ANY_CONTROL.lastIndex = 0;
  if (!ANY_CONTROL.test(s)) return s;
  return s.replace(ANY_CONTROL, escapeOne);
}

function escapeOne(c: string): string {
  const json = JSON.stringify(c).slice(1, -1);
  return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
