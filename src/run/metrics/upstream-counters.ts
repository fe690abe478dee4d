import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import { ratio, round6 } from './round.js';
import type { ModelResult, UpstreamFigures, UpstreamResult } from './result.js';

/** `detail` codes of a 429: which limit the upstream says was hit. */
export const LIMIT_REQUESTS = 1;
export const LIMIT_TOKENS = 2;
export const LIMIT_QUOTA = 3;

/** Status -1: no answer (a hang the caller timed out on). Status 0: connection reset. */
export const STATUS_TIMEOUT = -1;
export const STATUS_RESET = 0;

/** Status slots: index status + 1 for -1 .. 599, then one slot for anything else. */
const STATUS_SLOTS = 602;
const OTHER_SLOT = STATUS_SLOTS - 1;

// Per-model scalar counters, flat: model * SCALARS + field.
const ATTEMPTS = 0;
const REQUESTS = 1;
const TOKENS = 2;
const QUOTA = 3;
const WASTED = 4;
const SERVED = 5;
const SCALARS = 6;

function statusSlot(status: number): number {
  return status >= -1 && status <= 599 && Number.isInteger(status) ? status + 1 : OTHER_SLOT;
}

function slotName(slot: number): string {
  if (slot === OTHER_SLOT) return 'other';
  if (slot === STATUS_TIMEOUT + 1) return 'timeout';
  if (slot === STATUS_RESET + 1) return 'reset';
  return String(slot - 1);
}

export interface UpstreamCountersState {
  statuses: PackedCounts;
  scalars: PackedCounts;
}

/**
 * Upstream outcome counters per model, in flat typed arrays: every update is an index and an
 * add. Slot `models.length` collects what no model was named for (wasted tokens reported
 * without one), so totals stay complete.
 */
export class UpstreamCounters {
  private readonly models: readonly string[];
  private readonly statuses: Float64Array;
  private readonly scalars: Float64Array;

  constructor(models: readonly string[]) {
    this.models = models;
    this.statuses = new Float64Array((models.length + 1) * STATUS_SLOTS);
    this.scalars = new Float64Array((models.length + 1) * SCALARS);
  }

  attempt(model: number): void {
    this.scalars[this.slot(model) * SCALARS + ATTEMPTS]++;
  }

  response(model: number, status: number, detail: number, tokens: number): void {
    const m = this.slot(model);
    this.statuses[m * STATUS_SLOTS + statusSlot(status)]++;
    this.scalars[m * SCALARS + SERVED] += tokens;
    if (status !== 429) return;
    if (detail === LIMIT_REQUESTS) this.scalars[m * SCALARS + REQUESTS]++;
    else if (detail === LIMIT_TOKENS) this.scalars[m * SCALARS + TOKENS]++;
    else if (detail === LIMIT_QUOTA) this.scalars[m * SCALARS + QUOTA]++;
  }

  wasted(model: number, tokens: number): void {
    this.scalars[this.slot(model) * SCALARS + WASTED] += tokens;
  }

  /** Every counter, exactly, as JSON (`absorb` adds them to another run's). */
  state(): UpstreamCountersState {
    return { statuses: packCounts(this.statuses), scalars: packCounts(this.scalars) };
  }

  /** Adds what another collector of the same models counted (a fleet worker's share). */
  absorb(s: UpstreamCountersState): void {
    addCounts(this.statuses, s.statuses);
    addCounts(this.scalars, s.scalars);
  }

  /** Upstream attempts so far, every model. */
  totalAttempts(): number {
    let n = 0;
    for (let m = 0; m <= this.models.length; m++) n += this.scalars[m * SCALARS + ATTEMPTS];
    return n;
  }

  result(): UpstreamResult {
    const models: ModelResult[] = this.models.map((name, m) => ({ name, ...this.figures([m]) }));
    const all = this.models.map((_, m) => m).concat(this.models.length);
    return { ...this.figures(all), models };
  }

  /** Figures summed over the model slots given. */
  private figures(slots: number[]): UpstreamFigures {
    const sc = (field: number): number => slots.reduce((s, m) => s + this.scalars[m * SCALARS + field], 0);
    const counts = new Float64Array(STATUS_SLOTS);
    for (const m of slots) for (let i = 0; i < STATUS_SLOTS; i++) counts[i] += this.statuses[m * STATUS_SLOTS + i];
    const status: Record<string, number> = {};
    let answered = 0;
    let fiveXx = 0;
    counts.forEach((n, i) => {
      if (n === 0) return;
      status[slotName(i)] = n;
      answered += n;
      if (i >= 501 && i <= 600) fiveXx += n;
    });
    const timeouts = counts[STATUS_TIMEOUT + 1] + counts[STATUS_RESET + 1];
    return {
      attempts: sc(ATTEMPTS),
      status,
      rateLimited: { requests: sc(REQUESTS), tokens: sc(TOKENS), quota: sc(QUOTA) },
      share: {
        '429': round6(ratio(counts[430], answered)),
        '5xx': round6(ratio(fiveXx, answered)),
        timeout: round6(ratio(timeouts, answered)),
      },
      wastedTokens: round6(sc(WASTED)),
      tokensServed: round6(sc(SERVED)),
    };
  }

  /** Unknown or negative model indexes go to the unattributed slot. */
  private slot(model: number): number {
    return model >= 0 && model < this.models.length ? model : this.models.length;
  }
}
