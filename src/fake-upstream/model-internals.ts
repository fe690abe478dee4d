import { FaultTimeline } from '../upstream/fault-timeline.js';
import { Quota, type QuotaView } from '../upstream/quota.js';
import type { UpstreamModel } from '../upstream/upstream-model.js';

/**
 * The two things the HTTP server needs from `UpstreamModel` that it does not expose yet, in
 * one place so that they are easy to replace:
 *
 * - changing the fault phases of a running model (`PUT /_stormlab/faults`) without losing its
 *   quotas, busy slots and queue — a new model would forget them all;
 * - reading a model's RPM/TPM quotas for the `x-ratelimit-*` headers of every answer.
 *
 * Both read private fields (`faults`, `models[i].rpm|tpm`), checked at run time so that a
 * change in the model fails loudly here instead of quietly serving wrong headers. The
 * proposed public API: `UpstreamModel.setFaults(phases)` and `UpstreamModel.quotas(model)`.
 */
interface Internals {
  faults?: unknown;
  models?: Array<{ rpm?: unknown; tpm?: unknown }>;
}

function internals(model: UpstreamModel): Internals {
  return model as unknown as Internals;
}

function changed(what: string): Error {
  return new Error(`UpstreamModel internals changed (${what}): update src/fake-upstream/model-internals.ts`);
}

/** Makes `model` read its fault phases from `timeline` from now on. */
export function swapFaults(model: UpstreamModel, timeline: FaultTimeline): void {
  const m = internals(model);
  if (!(m.faults instanceof FaultTimeline)) throw changed('no FaultTimeline in .faults');
  m.faults = timeline;
}

/** The requests-per-minute and tokens-per-minute quotas of model `index`, when it has them. */
export function quotaViews(model: UpstreamModel, index: number): { requests?: QuotaView; tokens?: QuotaView } {
  const state = internals(model).models?.[index];
  if (state === undefined || !('rpm' in state) || !('tpm' in state)) throw changed(`no rpm/tpm on .models[${index}]`);
  const out: { requests?: QuotaView; tokens?: QuotaView } = {};
  if (state.rpm instanceof Quota) out.requests = state.rpm;
  else if (state.rpm !== null) throw changed('.rpm is not a Quota');
  if (state.tpm instanceof Quota) out.tokens = state.tpm;
  else if (state.tpm !== null) throw changed('.tpm is not a Quota');
  return out;
}
