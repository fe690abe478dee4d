import type { RunResult, ToolResult } from '../run/metrics/result.js';
import type { MetricUnit } from './metric.js';

type Get = (r: RunResult) => number | null;
/** How the catalog adds one metric: name, unit, whether higher is better, how to read it, its short forms. */
export type AddMetric = (
  name: string,
  unit: MetricUnit,
  higherIsBetter: boolean,
  value: Get,
  aliases?: string[],
) => void;

const COUNTS = [
  ['logicalCalls', false],
  ['attempts', false],
  ['retries', false],
  ['executions', false],
  ['intents', true],
  ['duplicates', false],
  ['conflicts', false],
  ['replays', true],
  ['ok', true],
  ['degraded', false],
  ['failed', false],
] as const;

/**
 * The tool metrics a gate can name: `tools.<tool>.<figure>` for each figure of a tool's result
 * (`tools.gmail.send.duplicates`, `tools.gmail.send.share.429`), sums over every tool
 * (`duplicates`, `conflicts`, `executions`), `tools.degraded share` (degraded ÷ tool calls ended),
 * `degraded share` (root tasks with a degraded tool call ÷ root tasks finished)
 * and the users' submissions. A figure of a run without tools reads 0 for the sums and null
 * for a named tool it lacks.
 */
export function addToolMetrics(add: AddMetric, tools: readonly string[], tenants: readonly string[]): void {
  for (const name of tools) {
    const at = `tools.${name}`;
    const of =
      (f: (t: ToolResult) => number): Get =>
      (r) => {
        const t = r.tools?.find((x) => x.name === name);
        return t === undefined ? null : f(t);
      };
    for (const [key, higher] of COUNTS)
      add(
        `${at}.${key}`,
        'count',
        higher,
        of((t) => t[key]),
      );
    add(
      `${at}.amplification`,
      'times',
      false,
      of((t) => t.amplification),
    );
    add(
      `${at}.failureRate`,
      'share',
      false,
      of((t) => t.failureRate),
      [`${at}.failure share`],
    );
    add(
      `${at}.degradedShare`,
      'share',
      false,
      of((t) => t.degradedShare),
      [`${at}.degraded share`],
    );
    for (const key of ['429', '409', '5xx', 'timeout'] as const)
      add(
        `${at}.share.${key}`,
        'share',
        false,
        of((t) => t.share[key]),
        [`${at}.${key} share`],
      );
    for (const p of ['p50', 'p95', 'p99'] as const)
      add(
        `${at}.latencyMs.${p}`,
        'ms',
        false,
        of((t) => t.latencyMs[p]),
        [`${at}.${p}`],
      );
  }
  const sum =
    (f: (t: ToolResult) => number): Get =>
    (r) =>
      (r.tools ?? []).reduce((a, t) => a + f(t), 0);
  add(
    'tools.duplicates',
    'count',
    false,
    sum((t) => t.duplicates),
    ['duplicates'],
  );
  add(
    'tools.conflicts',
    'count',
    false,
    sum((t) => t.conflicts),
    ['conflicts', 'idempotency conflicts'],
  );
  add(
    'tools.executions',
    'count',
    false,
    sum((t) => t.executions),
    ['executions'],
  );
  add('tools.degraded share', 'share', false, (r) => {
    const ended = sum((t) => t.ok + t.degraded + t.failed)(r) ?? 0;
    return ended > 0 ? (sum((t) => t.degraded)(r) ?? 0) / ended : 0;
  });
  // Root tasks: degraded (and, with stage budgets, partial) results ÷ root tasks finished.
  const finished = (r: RunResult): number => r.roots.ok + r.roots.late + r.roots.failed + (r.roots.partial ?? 0);
  add('roots.degraded', 'count', false, (r) => r.roots.degraded ?? 0);
  add('degraded share', 'share', false, (r) => (finished(r) > 0 ? (r.roots.degraded ?? 0) / finished(r) : 0), [
    'roots.degraded share',
  ]);
  add('roots.partial', 'count', false, (r) => r.roots.partial ?? null);
  add('partial share', 'share', false, (r) => (finished(r) > 0 ? (r.roots.partial ?? 0) / finished(r) : 0), [
    'roots.partial share',
  ]);
  for (const key of ['submissions', 'resubmits', 'impatient', 'afterError'] as const)
    add(`users.${key}`, 'count', false, (r) => r.users?.[key] ?? null);
  add('users.amplification', 'times', false, (r) => r.users?.amplification ?? null);
  for (const name of tenants) {
    const tenant = (r: RunResult) => r.tenants?.find((t) => t.name === name);
    for (const [key, unit, higher] of [
      ['offered', 'count', false],
      ['ok', 'count', true],
      ['failed', 'count', false],
      ['refused', 'count', false],
      ['goodput', 'rate', true],
      ['successRate', 'share', true],
    ] as const)
      add(`tenants.${name}.${key}`, unit, higher, (r) => tenant(r)?.[key] ?? null);
  }
  add('refused', 'count', false, (r) => (r.tenants ?? []).reduce((a, t) => a + t.refused, 0), ['entry.refused']);
}
