import { OptionError } from '../engine/errors.js';
import type { Random } from '../engine/random.js';
import type { FaultHost } from '../fake-upstream/control-routes.js';
import type { ServedFault } from '../fake-upstream/fault-phases.js';
import { servedTimeline } from '../fake-upstream/upstream-host.js';
import type { FaultKind } from '../upstream/config.js';
import type { FaultTimeline } from '../upstream/fault-timeline.js';

/** The name the timeline gives every model no phase names. */
const ANY_MODEL = '';

/** What a proxy cannot do to an answer it does not write: refused when installed, with why. */
const UNSUPPORTED: Partial<Record<FaultKind, string>> = {
  'prefill-rejected': 'the proxy does not read conversations (serve does)',
};

/**
 * The proxy's fault phases: the same `FaultTimeline` the fake upstream's model reads, built over
 * the models the phases name (the upstream's models are whatever the requests say) plus one
 * for every other name, so a phase without `model` hits every request and one with `model`
 * only the requests whose body names it.
 */
export class ProxyFaults implements FaultHost {
  private phases: ServedFault[] = [];
  private names: string[] = [ANY_MODEL];
  private index = new Map<string, number>();
  timeline: FaultTimeline;

  constructor(
    private readonly random: Random,
    phases: ServedFault[] = [],
  ) {
    this.timeline = servedTimeline([], this.names, random);
    this.setFaults(phases);
  }

  faults(): readonly ServedFault[] {
    return this.phases;
  }

  setFaults(phases: ServedFault[]): void {
    phases.forEach((p, i) => {
      const why = UNSUPPORTED[p.kind];
      if (why !== undefined)
        throw new OptionError(`faults[${i}].kind ${p.kind} cannot be injected by a proxy: ${why}`, `faults[${i}].kind`);
      if (p.kind === 'content-filter' && p.mode !== 'reject')
        throw new OptionError(
          `faults[${i}] content-filter mode ${p.mode ?? 'finish'}${p.mode === undefined ? ' (the default)' : ''} cannot be injected by a proxy: a filtered 200 is text only the model writes (serve does it); mode: reject gives the provider's 400`,
          `faults[${i}].mode`,
        );
    });
    const named = [...new Set(phases.flatMap((p) => (p.model === undefined ? [] : [p.model])))];
    const names = [...named, ANY_MODEL];
    this.timeline = servedTimeline(phases, names, this.random);
    this.names = names;
    this.index = new Map(named.map((n, i) => [n, i]));
    this.phases = phases;
  }

  /** The timeline's index for a request naming `model` (null: its body named none). */
  modelIndex(model: string | null): number {
    return (model === null ? undefined : this.index.get(model)) ?? this.names.length - 1;
  }
}
