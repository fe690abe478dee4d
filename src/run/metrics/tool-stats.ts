import { SHED_REASONS, type ShedReason } from '../../engine/errors.js';
import type { ToolServiceStats } from '../../upstream/tool-service.js';
import { type EncodedHistogram, LatencyHistogram } from './histogram.js';
import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import { SHED_INDEX } from './layer-stats.js';
import { ratio, round6 } from './round.js';
import type { ToolResult, UsersResult } from './tool-result.js';

const LOGICAL = 0;
const ATTEMPTS = 1;
const RETRIES = 2;
const OK = 3;
const DEGRADED = 4;
const FAILED = 5;
const ANSWERED = 6;
const S429 = 7;
const S409 = 8;
const S5XX = 9;
const TIMEOUT = 10;
const FIELDS = 11;

/** A tool as the metrics know it. */
export interface ToolInfo {
  name: string;
  sideEffect: boolean;
}

export interface ToolStatsState {
  counts: PackedCounts;
  sheds: PackedCounts;
  latency: EncodedHistogram[];
  users: { tasks: number; submissions: number; resubmits: number; impatient: number; afterError: number };
}

/**
 * Per-tool call counters and latency, as the callers saw them, and the users' submissions.
 * What the tool service did (executions, duplicates, conflicts) is the service's to count:
 * `result` takes its figures.
 */
export class ToolStats {
  private readonly counts: Float64Array;
  private readonly sheds: Float64Array;
  private readonly latency: LatencyHistogram[];
  private readonly users = { tasks: 0, submissions: 0, resubmits: 0, impatient: 0, afterError: 0 };

  constructor(readonly tools: readonly ToolInfo[]) {
    this.counts = new Float64Array(tools.length * FIELDS);
    this.sheds = new Float64Array(tools.length * SHED_REASONS.length);
    this.latency = tools.map(() => new LatencyHistogram());
  }

  logical(tool: number, n: number): void {
    this.counts[tool * FIELDS + LOGICAL] += n;
  }

  attempt(tool: number, isRetry: boolean): void {
    this.counts[tool * FIELDS + ATTEMPTS]++;
    if (isRetry) this.counts[tool * FIELDS + RETRIES]++;
  }

  answer(tool: number, status: number): void {
    const at = tool * FIELDS;
    this.counts[at + ANSWERED]++;
    if (status === 429) this.counts[at + S429]++;
    else if (status === 409) this.counts[at + S409]++;
    else if (status >= 500) this.counts[at + S5XX]++;
    else if (status < 0) this.counts[at + TIMEOUT]++;
  }

  /** `outcome`: 0 ok, 1 failed, 2 degraded (`ToolOutcome`). */
  done(tool: number, latencyMs: number, outcome: number): void {
    this.counts[tool * FIELDS + (outcome === 0 ? OK : outcome === 2 ? DEGRADED : FAILED)]++;
    this.latency[tool].record(latencyMs);
  }

  shed(tool: number, reason: ShedReason): void {
    this.sheds[tool * SHED_REASONS.length + SHED_INDEX[reason]]++;
  }

  submit(resubmit: boolean, impatient: boolean): void {
    const u = this.users;
    u.submissions++;
    if (!resubmit) u.tasks++;
    else {
      u.resubmits++;
      if (impatient) u.impatient++;
      else u.afterError++;
    }
  }

  state(): ToolStatsState {
    return {
      counts: packCounts(this.counts),
      sheds: packCounts(this.sheds),
      latency: this.latency.map((h) => h.encode()),
      users: { ...this.users },
    };
  }

  absorb(s: ToolStatsState): void {
    addCounts(this.counts, s.counts);
    addCounts(this.sheds, s.sheds);
    s.latency.forEach((h, i) => this.latency[i]?.add(h));
    const u = this.users;
    u.tasks += s.users.tasks;
    u.submissions += s.users.submissions;
    u.resubmits += s.users.resubmits;
    u.impatient += s.users.impatient;
    u.afterError += s.users.afterError;
  }

  usersResult(): UsersResult {
    const u = this.users;
    return { ...u, amplification: round6(ratio(u.submissions, u.tasks)) };
  }

  /** Every tool's figures, with the service's executions, duplicates and conflicts (zeros without them). */
  result(service: readonly ToolServiceStats[] | undefined): ToolResult[] {
    return this.tools.map((t, i) => {
      const c = (f: number): number => this.counts[i * FIELDS + f];
      const s = service?.find((x) => x.name === t.name);
      const shed: Partial<Record<ShedReason, number>> = {};
      SHED_REASONS.forEach((reason, r) => {
        const n = this.sheds[i * SHED_REASONS.length + r];
        if (n > 0) shed[reason] = n;
      });
      const ended = c(OK) + c(DEGRADED) + c(FAILED);
      const h = this.latency[i];
      return {
        name: t.name,
        sideEffect: t.sideEffect,
        logicalCalls: c(LOGICAL),
        attempts: c(ATTEMPTS),
        retries: c(RETRIES),
        amplification: round6(ratio(c(ATTEMPTS), c(LOGICAL))),
        executions: s?.executions ?? 0,
        intents: s?.intents ?? 0,
        duplicates: s?.duplicates ?? 0,
        conflicts: s?.conflicts ?? 0,
        replays: s?.replays ?? 0,
        ok: c(OK),
        degraded: c(DEGRADED),
        failed: c(FAILED),
        failureRate: round6(ratio(c(FAILED), ended)),
        degradedShare: round6(ratio(c(DEGRADED), ended)),
        share: {
          '429': round6(ratio(c(S429), c(ANSWERED))),
          '409': round6(ratio(c(S409), c(ANSWERED))),
          '5xx': round6(ratio(c(S5XX), c(ANSWERED))),
          timeout: round6(ratio(c(TIMEOUT), c(ANSWERED))),
        },
        shed,
        latencyMs: { p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99) },
      };
    });
  }
}
