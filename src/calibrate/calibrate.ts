import type { RunResult } from '../run/metrics/result.js';
import { type RunSpec, runSpecOf } from '../run/run-spec.js';
import { Simulation } from '../run/sim/simulation.js';
import { loadScenario } from '../scenario/load-scenario.js';
import { parseDuration } from '../upstream/duration.js';
import { type Draft, derive } from './derive.js';
import { faultPreset, type FaultPreset } from './fault-presets.js';
import { fitReport, type FitReport } from './fit-report.js';
import { Observations } from './observations.js';
import { readOtlpFile } from './otlp-reader.js';
import { scenarioText } from './scenario-text.js';
import { readServeLog, ServeLog } from './serve-log.js';
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
  /** `stormlab serve --log` files of the same run: the upstream's errors are the server's. */
  serveLogs?: readonly TraceFile[];
}

export interface Calibration {
  /** The scenario file. */
  text: string;
  draft: Draft;
  /** The scenario as fitted (before `--faults`), simulated: its runs (see `fitRuns`) as one. */
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
  let serve: ServeLog | undefined;
  if (options.serveLogs !== undefined && options.serveLogs.length > 0) {
    serve = new ServeLog();
    for (const f of options.serveLogs) readServeLog(f.path, f.label, serve);
  }
  const draft = derive(obs, options.name ?? 'calibrated', serve);
  const fitted = scenarioText(draft);
  const scenario = load(fitted);
  const spec = runSpecOf(scenario, 'naive');
  const replay = spec.traffic.arrival.type !== 'closed';
  const { simulated, runs } = fitRuns(replay ? replayed(spec, obs) : spec, obs.roots);
  const report = fitReport(draft.observed, simulated, runs, replay ? 'replayed' : 'as fitted');
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

/** Simulated root tasks the fit pools at least (over up to `MAX_FIT_RUNS` seeds), so a percentile is not one run's draw. */
const FIT_ROOTS = 2000;
const MAX_FIT_RUNS = 8;

/**
 * The fit's runs: the scenario with seeds 1, 2, … — as many as give `FIT_ROOTS` simulated
 * roots, at most `MAX_FIT_RUNS` (one for traces of 2,000 roots and more) — counted as one run
 * (their histograms merged, so a percentile is of every sample, not a mean of the runs').
 */
function fitRuns(spec: RunSpec, roots: number): { simulated: RunResult; runs: number } {
  const runs = Math.max(1, Math.min(MAX_FIT_RUNS, Math.ceil(FIT_ROOTS / Math.max(1, roots))));
  const sims = Array.from({ length: runs }, (_, i) => {
    const sim = new Simulation({ ...spec, seed: i + 1 });
    sim.advanceTo(Number.POSITIVE_INFINITY);
    return sim;
  });
  for (const other of sims.slice(1)) sims[0].absorb(other.counts());
  return { simulated: sims[0].result(), runs };
}

/**
 * The run spec with the traced root start times for arrivals (open loop): the fit compares
 * the scenario's tree, retries and upstream against the traces on the same arrivals, so a
 * fault phase meets the same roots it met, not a fresh Poisson draw of them.
 */
function replayed(spec: RunSpec, obs: Observations): RunSpec {
  const atMs = Array.from(obs.rootStart.subarray(0, obs.roots)).sort((a, b) => a - b);
  const t0 = atMs[0];
  for (let i = 0; i < atMs.length; i++) atMs[i] -= t0;
  const durationMs = Math.max(spec.durationMs, atMs[atMs.length - 1] + 1);
  return { ...spec, durationMs, traffic: { ...spec.traffic, arrival: { type: 'replay', atMs } } };
}

/** The written scenario, loaded as any is; one that does not load is calibrate's bug, not the user's (exit 70). */
function load(text: string) {
  try {
    return loadScenario(text, { source: 'the calibrated scenario' });
  } catch (e) {
    throw new Error(`calibrate wrote a scenario that does not load: ${(e as Error).message}\n${text}`);
  }
}
