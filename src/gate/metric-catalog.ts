import { SHED_REASONS } from '../engine/errors.js';
import type { LayerResult, ResultFile, RunResult, UpstreamFigures } from '../run/metrics/result.js';
import type { Scenario } from '../scenario/scenario.js';
import { closest } from '../scenario/suggest.js';
import { GateError } from './gate-error.js';
import type { Metric, MetricUnit } from './metric.js';
import { addToolMetrics } from './tool-metrics.js';

type Get = (r: RunResult) => number | null;
type Scope<T> = (r: RunResult) => T | undefined;

const PERCENTILES = ['p50', 'p95', 'p99'] as const;
const LIVE = ['poolConnections', 'maxPending', 'meanPending', 'requestErrors'] as const;
/** Hop 2 of a gateway under test (`--upstream`), and the total amplification. */
const HOP = ['sent', 'reached', 'amplification', 'totalAmplification', 'noLengthHeader'] as const;
const STATUS = /^(.*\.)?status\.(\d{3}|reset|timeout|other|cancelled|inFlight)$/;

/**
 * Every metric a gate can name, for a given set of layers and models: each number of a
 * variant's result JSON by its path (`upstream.share.429`; layers and models by name:
 * `layers.llm.latencyMs.p99`), the short forms people write (`recovery`, `p99`,
 * `layers.llm.p99`, `wastedTokens`), and the sums and shares that are not stored (`shed`,
 * `shed.budget`, `shed.budget share` — refused ÷ (attempts + refused), over every layer or
 * one). A name it does not know is a `GateError` with a did-you-mean.
 */
export class MetricCatalog {
  private readonly metrics = new Map<string, Metric>();
  /** Canonical names first, then short forms: suggestions prefer the canonical. */
  private readonly names: string[] = [];

  constructor(
    readonly layers: readonly string[],
    readonly models: readonly string[],
    readonly tools: readonly string[] = [],
    readonly tenants: readonly string[] = [],
  ) {
    this.addRun();
    for (const name of layers) this.addLayer(name);
    this.addUpstream('upstream', (r) => r.upstream);
    for (const name of models)
      this.addUpstream(`upstream.models.${name}`, (r) => r.upstream.models.find((m) => m.name === name));
    this.addShed('', (r) => r.layers);
    for (const key of LIVE) this.add(`live.${key}`, 'count', false, (r) => r.live?.[key] ?? null);
    for (const key of HOP) {
      const unit = key === 'amplification' || key === 'totalAmplification' ? 'times' : 'count';
      this.add(`live.upstream.${key}`, unit, false, (r) => r.live?.upstream?.[key] ?? null);
    }
    // Hop 2's statuses as the upstream sent them: `live.upstream.status.503` (any code, as upstream.status.* takes).
    this.add('live.upstream.status.200', 'count', true, (r) => {
      const hop = r.live?.upstream;
      return hop === undefined ? null : (hop.status['200'] ?? 0);
    });
    addToolMetrics((...args) => this.add(...args), tools, tenants);
  }

  static ofScenario(s: Scenario): MetricCatalog {
    return new MetricCatalog(
      s.traffic.layers.map((l) => l.name),
      s.upstream.models.map((m) => m.name),
      (s.upstream.tools ?? []).map((t) => t.name),
      (s.traffic.tenants ?? (s.traffic.entry === undefined ? [] : [{ name: 'default' }])).map((t) => t.name),
    );
  }

  /** The layers and models of every variant of a result file. */
  static ofResult(file: ResultFile): MetricCatalog {
    const layers = new Set(file.variants.flatMap((v) => v.layers.map((l) => l.name)));
    const models = new Set(file.variants.flatMap((v) => v.upstream.models.map((m) => m.name)));
    const tools = new Set(file.variants.flatMap((v) => (v.tools ?? []).map((t) => t.name)));
    const tenants = new Set(file.variants.flatMap((v) => (v.tenants ?? []).map((t) => t.name)));
    return new MetricCatalog([...layers], [...models], [...tools], [...tenants]);
  }

  /** The metric `name` stands for; spaces around `share` do not matter. */
  resolve(name: string): Metric {
    const key = name.trim().replace(/\s+/g, ' ');
    const known = this.metrics.get(key);
    if (known !== undefined) return known;
    const status = STATUS.exec(key);
    if (status !== null && this.metrics.has(`${status[1] ?? 'upstream.'}status.200`))
      return this.status(key, status[1] ?? 'upstream.', status[2]);
    throw new GateError(this.unknown(key));
  }

  /** Every canonical name (for help and listings). */
  list(): string[] {
    return this.names.filter((n) => this.metrics.get(n)!.name === n);
  }

  private unknown(key: string): string {
    const parts = key.split('.');
    const scoped = (what: string, all: readonly string[], at: number): string | undefined => {
      if (parts.length <= at || all.includes(parts[at])) return undefined;
      const hint = closest(parts[at], all);
      return `unknown ${what} ${JSON.stringify(parts[at])} in ${JSON.stringify(key)}${hint ? ` (did you mean ${hint}?)` : ''}; ${what}s: ${all.join(', ') || 'none'}`;
    };
    if (parts[0] === 'layers') return scoped('layer', this.layers, 1) ?? this.suggest(key);
    if (parts[0] === 'upstream' && parts[1] === 'models') return scoped('model', this.models, 2) ?? this.suggest(key);
    return this.suggest(key);
  }

  private suggest(key: string): string {
    const hint = closest(key, this.names);
    return `unknown metric ${JSON.stringify(key)}${hint ? ` (did you mean ${hint}?)` : ''}`;
  }

  private add(name: string, unit: MetricUnit, higherIsBetter: boolean, value: Get, aliases: string[] = []): void {
    const metric: Metric = { name, unit, higherIsBetter, value };
    for (const n of [name, ...aliases]) {
      this.metrics.set(n, metric);
      this.names.push(n);
    }
  }

  private addRun(): void {
    this.add('amplification', 'times', false, (r) => r.amplification);
    this.add('goodput', 'rate', true, (r) => r.goodput);
    this.add('successRate', 'share', true, (r) => r.successRate);
    // A run that never recovered has no recovery time: null, judged as "never" (see evaluate).
    this.add('recoveryMs', 'ms', false, (r) => r.recoveryMs, ['recovery']);
    this.add('durationMs', 'ms', false, (r) => r.durationMs, ['duration']);
    // A run with no streamed layer has none: a cut body that is not streamed is an error to every caller.
    this.add('truncatedSuccesses', 'count', false, (r) => r.truncatedSuccesses ?? 0, ['truncated']);
    for (const key of ['offered', 'ok', 'late', 'failed', 'unfinished'] as const) {
      this.add(`roots.${key}`, 'count', key === 'ok', (r) => r.roots[key]);
    }
    for (const p of [...PERCENTILES, 'max'] as const) {
      const bare = p === 'max' ? [] : [p, `latency.${p}`, `latencyMs.${p}`];
      this.add(`roots.latencyMs.${p}`, 'ms', false, (r) => r.roots.latencyMs[p], [
        `roots.${p}`,
        `roots.latency.${p}`,
        ...bare,
      ]);
    }
  }

  private addLayer(name: string): void {
    const at = `layers.${name}`;
    const layer: Scope<LayerResult> = (r) => r.layers.find((l) => l.name === name);
    const num =
      (f: (l: LayerResult) => number): Get =>
      (r) => {
        const l = layer(r);
        return l === undefined ? null : f(l);
      };
    this.add(
      `${at}.logicalCalls`,
      'count',
      false,
      num((l) => l.logicalCalls),
    );
    this.add(
      `${at}.attempts`,
      'count',
      false,
      num((l) => l.attempts),
    );
    this.add(
      `${at}.retries`,
      'count',
      false,
      num((l) => l.retries),
    );
    this.add(
      `${at}.amplification`,
      'times',
      false,
      num((l) => l.amplification),
    );
    this.add(
      `${at}.ok`,
      'count',
      true,
      num((l) => l.ok),
    );
    this.add(
      `${at}.failed`,
      'count',
      false,
      num((l) => l.failed),
    );
    this.add(
      `${at}.successRate`,
      'share',
      true,
      num((l) => l.successRate),
    );
    for (const p of PERCENTILES)
      this.add(
        `${at}.latencyMs.${p}`,
        'ms',
        false,
        num((l) => l.latencyMs[p]),
        [`${at}.${p}`, `${at}.latency.${p}`],
      );
    this.add(
      `${at}.wastedTokens`,
      'tokens',
      false,
      num((l) => l.wastedTokens),
    );
    this.add(
      `${at}.truncatedSuccesses`,
      'count',
      false,
      num((l) => l.truncatedSuccesses ?? 0),
      [`${at}.truncated`],
    );
    // Streamed layers only; null (a skipped check) for a layer that is not streamed.
    for (const p of PERCENTILES)
      this.add(`${at}.ttftMs.${p}`, 'ms', false, (r) => layer(r)?.ttftMs?.[p] ?? null, [`${at}.ttft.${p}`]);
    this.addShed(`${at}.`, (r) => {
      const l = layer(r);
      return l === undefined ? undefined : [l];
    });
  }

  /** `shed`, `shed.<reason>` and their `share` forms, summed over the layers `scope` picks. */
  private addShed(prefix: string, scope: Scope<LayerResult[]>): void {
    const sum =
      (f: (l: LayerResult) => number): Get =>
      (r) => {
        const ls = scope(r);
        return ls === undefined ? null : ls.reduce((a, l) => a + f(l), 0);
      };
    const total = (l: LayerResult): number => SHED_REASONS.reduce((a, k) => a + (l.shed[k] ?? 0), 0);
    const share =
      (count: Get): Get =>
      (r) => {
        const refused = count(r);
        const tried = sum((l) => l.attempts + total(l))(r);
        return refused === null || tried === null ? null : tried > 0 ? refused / tried : 0;
      };
    this.add(`${prefix}shed`, 'count', false, sum(total));
    this.add(`${prefix}shed share`, 'share', false, share(sum(total)));
    for (const reason of SHED_REASONS) {
      const count = sum((l) => l.shed[reason] ?? 0);
      this.add(`${prefix}shed.${reason}`, 'count', false, count);
      this.add(`${prefix}shed.${reason} share`, 'share', false, share(count));
    }
  }

  private addUpstream(at: string, scope: Scope<UpstreamFigures>): void {
    const num =
      (f: (u: UpstreamFigures) => number): Get =>
      (r) => {
        const u = scope(r);
        return u === undefined ? null : f(u);
      };
    const top = at === 'upstream';
    this.add(
      `${at}.attempts`,
      'count',
      false,
      num((u) => u.attempts),
      top ? ['upstreamAttempts'] : [],
    );
    for (const code of ['200', '429', '500', '503', '529', 'reset', 'timeout'])
      this.add(
        `${at}.status.${code}`,
        'count',
        code === '200',
        num((u) => u.status[code] ?? 0),
      );
    for (const key of ['requests', 'tokens', 'quota'] as const)
      this.add(
        `${at}.rateLimited.${key}`,
        'count',
        false,
        num((u) => u.rateLimited[key]),
      );
    for (const key of ['429', '5xx', 'timeout'] as const)
      this.add(
        `${at}.share.${key}`,
        'share',
        false,
        num((u) => u.share[key]),
      );
    this.add(
      `${at}.wastedTokens`,
      'tokens',
      false,
      num((u) => u.wastedTokens),
      top ? ['wastedTokens'] : [],
    );
    this.add(
      `${at}.tokensServed`,
      'tokens',
      true,
      num((u) => u.tokensServed),
      top ? ['tokensServed'] : [],
    );
  }

  /** `upstream.status.418` and friends: any status, counted 0 when it never came. */
  private status(key: string, prefix: string, code: string): Metric {
    const like = this.metrics.get(`${prefix}status.200`)!;
    return {
      name: key,
      unit: 'count',
      higherIsBetter: false,
      value: (r) => (like.value(r) === null ? null : statusOf(r, prefix, code)),
    };
  }
}

function statusOf(r: RunResult, prefix: string, code: string): number {
  if (prefix === 'live.upstream.') return r.live?.upstream?.status[code] ?? 0;
  const model = /^upstream\.models\.(.+)\.$/.exec(prefix);
  const figures = model === null ? r.upstream : r.upstream.models.find((m) => m.name === model[1]);
  return figures?.status[code] ?? 0;
}
