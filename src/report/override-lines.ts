import type { EffectiveScenario, OverrideRecord } from '../run/metrics/result.js';

/** Longest a value is shown in a line before it is cut with `…` (the JSON has it whole). */
const MAX_VALUE = 48;

/**
 * The fields the variants and the command line set, each once, as the summary lists them:
 *
 *     variant naive   layers[*].retry = {policy: naive, attempts: 3}
 *     --set           layers[*].retry.attempts = 2 (over variant naive's 3)
 *
 * each with what it replaced, and whose that was (`the scenario`: the file).
 *
 * An override every variant of a compare shares (a `--set`) is one line; a variant's own is
 * one line naming it. Empty when nothing was overridden or the file predates the record.
 */
export function overrideLines(vs: ReadonlyArray<{ effective?: EffectiveScenario }>): string[] {
  const entries = new Map<string, { record: OverrideRecord; replaced: string[] }>();
  for (const v of vs) {
    for (const o of v.effective?.overrides ?? []) {
      const key = `${o.from}\n${o.path}\n${JSON.stringify(o.value)}`;
      const e = entries.get(key) ?? { record: o, replaced: [] };
      const was = replacedText(o);
      if (was !== undefined && !e.replaced.includes(was)) e.replaced.push(was);
      entries.set(key, e);
    }
  }
  if (entries.size === 0) return [];
  const width = Math.max(...[...entries.values()].map((e) => e.record.from.length));
  return [...entries.values()].map(({ record: o, replaced }) => {
    const over = replaced.length === 0 ? '' : ` (${replaced.join('; ')})`;
    const set = o.value === null ? ' removed (its default applies)' : ` = ${flowText(o.value)}`;
    return `  ${o.from.padEnd(width)}  ${o.path}${set}${over}`;
  });
}

/** `over variant naive's 3`, `over the scenario's 20`, `as the scenario had it`: what an override replaced, and whose it was. */
function replacedText(o: OverrideRecord): string | undefined {
  if (!('was' in o)) return undefined;
  const whose = o.wasFrom === undefined || o.wasFrom === 'scenario' ? 'the scenario' : o.wasFrom;
  // Equal values compare as text: the record went through JSON.
  if (JSON.stringify(o.was) === JSON.stringify(o.value)) return `as ${whose} had it`;
  return `over ${whose}'s ${flowText(o.was)}`;
}

/** A value as YAML's flow style writes it, near enough: `{policy: naive, attempts: 3}`, `[a, b]`, `30s`. */
export function flowText(value: unknown): string {
  const text = flow(value);
  return text.length <= MAX_VALUE ? text : `${text.slice(0, MAX_VALUE - 1)}…`;
}

function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${flow(v)}`)
      .join(', ')}}`;
  if (typeof value === 'string') return /^[\w.\-/%*+]+$/.test(value) ? value : JSON.stringify(value);
  return String(value);
}
