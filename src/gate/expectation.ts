import { closest } from '../scenario/suggest.js';
import { GateError } from './gate-error.js';
import type { Metric } from './metric.js';
import type { MetricCatalog } from './metric-catalog.js';
import { parseThreshold } from './threshold.js';

export type Op = '<' | '<=' | '>' | '>=' | '==' | '!=';

/** One parsed expectation: `variants.engine.layers.llm.p99 < 20s`. */
export interface Expectation {
  /** As written (trimmed), for tables and JUnit test names. */
  text: string;
  /** Judge only this variant; every variant of the result when absent. */
  variant?: string;
  metric: Metric;
  op: Op;
  threshold: number;
  /** The threshold as written (`20s`, `95%`), for tables. */
  thresholdText: string;
}

const SHAPE = /^(.+?)\s*(<=|>=|==|!=|=|<|>)\s*(.*)$/;

/**
 * Parses `<metric> <op> <value>`: ops `<`, `<=`, `>`, `>=`, `==` (or `=`), `!=`; the metric
 * a name the catalog knows, optionally after `variants.<name>.` to judge one variant only;
 * the value in the metric's unit (see `parseThreshold`). Throws a `GateError` saying what is
 * wrong: `unknown metric "amplificaton" (did you mean amplification?)`.
 */
export function parseExpectation(text: string, catalog: MetricCatalog, variants: readonly string[]): Expectation {
  const trimmed = text.trim();
  const m = SHAPE.exec(trimmed);
  if (m === null || m[1].trim() === '') {
    throw new GateError(`expected <metric> <op> <value> like "amplification < 1.5", got ${JSON.stringify(trimmed)}`);
  }
  if (m[3].trim() === '') throw new GateError(`expected a value after ${m[2]} in ${JSON.stringify(trimmed)}`);
  const { variant, path } = splitVariant(m[1].trim(), variants);
  const metric = catalog.resolve(path);
  const op = (m[2] === '=' ? '==' : m[2]) as Op;
  const thresholdText = m[3].trim();
  return { text: trimmed, variant, metric, op, threshold: parseThreshold(thresholdText, metric, path), thresholdText };
}

/** `variants.engine.amplification` → variant `engine`, path `amplification`. */
function splitVariant(name: string, variants: readonly string[]): { variant?: string; path: string } {
  if (!name.startsWith('variants.')) return { path: name };
  const rest = name.slice('variants.'.length);
  const dot = rest.indexOf('.');
  if (dot <= 0) throw new GateError(`expected variants.<name>.<metric>, got ${JSON.stringify(name)}`);
  const variant = rest.slice(0, dot);
  if (!variants.includes(variant)) {
    const hint = closest(variant, variants);
    throw new GateError(
      `unknown variant ${JSON.stringify(variant)}${hint ? ` (did you mean ${hint}?)` : ''}; variants: ${variants.join(', ') || 'none'}`,
    );
  }
  return { variant, path: rest.slice(dot + 1) };
}

/** Whether `actual op threshold` holds. */
export function holds(actual: number, op: Op, threshold: number): boolean {
  switch (op) {
    case '<':
      return actual < threshold;
    case '<=':
      return actual <= threshold;
    case '>':
      return actual > threshold;
    case '>=':
      return actual >= threshold;
    case '==':
      return actual === threshold;
    case '!=':
      return actual !== threshold;
  }
}
