import type { RunResult } from '../run/metrics/result.js';
import { runSpecOf } from '../run/run-spec.js';
import { Simulation } from '../run/sim/simulation.js';
import { loadScenario } from '../scenario/load-scenario.js';
import { parseDuration } from '../upstream/duration.js';
import { type Draft, derive } from './derive.js';
import { faultPreset, type FaultPreset } from './fault-presets.js';
import { fitReport, type FitReport } from './fit-report.js';
import { Observations } from './observations.js';
import { readOtlpFile } from './otlp-reader.js';
import { scenarioText } from './scenario-text.js';
import { TraceAssembler } from './trace-assembler.js';
import { observeTrace } from './trace-observer.js';

export interface TraceFile {
  /** Where to read it. */
  path: string;
  /** How to name it in messages and the header (as given on the command line). */
  label: string;
}

export interface CalibrateOptions {
  /** The scenario's name. @default 'calibrated' */
  name?: string;
  /** A named fault phase to add after the fit. */
  faults?: FaultPreset;
}

export interface Calibration {
  /** The scenario file. */
  text: string;
  draft: Draft;
  /** The scenario as fitted (before `--faults`), simulated. */
  simulated: RunResult;
  report: FitReport;
  obs: Observations;
}

/** Reads the trace files into observations (streamed; see `TraceAssembler` for what is held). */
export function observe(files: readonly TraceFile[]): Observations {
  const obs = new Observations();
  const asm = new TraceAssembler((id, spans) => observeTrace(obs, id, spans));
  for (const f of files) {
    obs.files.push(f.label);
    readOtlpFile(f.path, f.label, (t, s) => asm.add(t, s));
  }
  asm.flush();
  obs.lateSpans = asm.lateSpans;
  obs.peakOpenTraces = asm.peakOpen;
  obs.peakSpansHeld = asm.peakSpans;
  return obs;
}

/**
 * `stormlab calibrate`: the traces' scenario, checked by loading it as any scenario is, and its
 * fit — the scenario simulated with the same arrivals, against what the traces showed. A named
 * fault (`--faults`) is added after the fit, so the fit compares like with like.
 */
export function calibrate(files: readonly TraceFile[], options: CalibrateOptions = {}): Calibration {
  const obs = observe(files);
  const draft = derive(obs, options.name ?? 'calibrated');
  const fitted = scenarioText(draft);
  const scenario = load(fitted);
  const sim = new Simulation(runSpecOf(scenario, 'naive'));
  sim.advanceTo(Number.POSITIVE_INFINITY);
  const simulated = sim.result();
  const report = fitReport(draft.observed, simulated);
  let text = fitted;
  if (options.faults !== undefined) {
    const { phases, says } = faultPreset(options.faults, parseDuration(draft.doc.duration) ?? scenario.durationMs);
    const upstream = draft.doc.upstream as { faults?: unknown[] };
    upstream.faults = [...(upstream.faults ?? []), ...phases];
    text = scenarioText(draft, [says]);
    load(text);
  }
  return { text, draft, simulated, report, obs };
}

/** The written scenario, loaded as any is; one that does not load is calibrate's bug, not the user's (exit 70). */
function load(text: string) {
  try {
    return loadScenario(text, { source: 'the calibrated scenario' });
  } catch (e) {
    throw new Error(`calibrate wrote a scenario that does not load: ${(e as Error).message}\n${text}`);
  }
}
