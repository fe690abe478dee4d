import { colorWanted } from '../color-wanted.js';
import { GateError } from '../../gate/gate-error.js';
import { MetricCatalog } from '../../gate/metric-catalog.js';
import type { Metric } from '../../gate/metric.js';
import { isEngineClash } from '../../explore/point-refusal.js';
import { RefusedError } from '../../explore/refused-error.js';
import { runPoints, type RunPointsFn } from '../../explore/run-points.js';
import { changedNothing, runSweep, type SweepSpec } from '../../explore/sweep.js';
import { SweepError } from '../../explore/sweep-error.js';
import { gridSize, parseSweepParams, type SweepParamSpec } from '../../explore/sweep-params.js';
import { sweepCsv, sweepJson } from '../../report/sweep-file.js';
import { sweepHeadline, sweepText } from '../../report/sweep-table.js';
import { resolveScenario } from '../../scenario/resolve-scenario.js';
import { ScenarioError } from '../../scenario/scenario-error.js';
import type { Scenario } from '../../scenario/scenario.js';
import { EXIT, UsageError, type Io } from '../io.js';
import type { ScenarioFlags } from '../scenario-args.js';
import { seedList } from '../../explore/seed-stats.js';
import { heldUntilQueue, openQueue, queueTarget, queueText, queueWaitMs } from './queue-args.js';
import {
  parseWorkers,
  pointBase,
  positiveInt,
  printOverrides,
  quietWorkers,
  runCap,
  withValues,
  workerReporter,
  workersText,
  type PointBase,
} from './explore-args.js';
import { checkOutputs, STDOUT_PATH, textIo, writeOutput } from '../write-output.js';
import { PointsStop, stoppedExit } from './points-stop.js';

export interface SweepFlags extends ScenarioFlags {
  /** `path=v1,v2,…` (repeatable). */
  param?: string[];
  metric?: string;
  variant?: string;
  workers?: string;
  seeds?: string;
  /** A Redis URL: the points go on a BullMQ queue for `stormlab worker`s. */
  queue?: string;
  /** How long the queue's Redis may be away before the command fails (a duration). */
  queueWait?: string;
  json?: string;
  csv?: string;
  quiet?: boolean;
}

/**
 * `stormlab sweep <scenario> --param path=v1,v2,…`: runs the grid of the parameters' values
 * (in parallel on worker threads), prints every point, the heatmap of the metric and the
 * Pareto front, and writes --json and --csv. Every flag, and every value against the
 * scenario, is checked before anything runs; a cell whose values clash (each fine alone) is
 * shown as refused, and only a grid of nothing but such cells is exit 2.
 */
export async function sweepCommand(
  realIo: Io,
  arg: string,
  flags: SweepFlags,
  run: RunPointsFn = runPoints,
): Promise<number> {
  const io = textIo(realIo, [flags.json, flags.csv]);
  const workers = workerReporter(io, flags.quiet);
  const queue = queueTarget(flags);
  const queueWait = queueWaitMs(flags);
  const announce = heldUntilQueue(io, queue !== undefined);
  // Bad flags or values throw (a SweepError's every problem is a line of its own: cli/failure.ts).
  const spec: SweepSpec = { ...prepare(announce.io, arg, flags), onWorkers: workers.onWorkers };
  const remote =
    queue === undefined ? undefined : await openQueue(queue, spec.job, { waitMs: queueWait, say: io.stderr });
  announce.flush();
  const stop = new PointsStop(io);
  const ran = await stop.race(
    runSweep(spec, stop.wrap(remote?.run ?? run))
      .catch((e: unknown) => {
        if (e instanceof RefusedError) throw new UsageError(`--param: ${e.message}`);
        throw e;
      })
      .finally(() => remote?.close()),
  );
  if ('stopped' in ran) {
    await remote?.close().catch(() => {});
    return stoppedExit(io, 'sweep', ran.stopped, gridSize(spec.params) * Math.max(1, spec.seeds?.length ?? 1));
  }
  const file = ran.value;
  if (remote !== undefined && !flags.quiet)
    io.stderr(`queue: ${remote.workers()} worker${remote.workers() === 1 ? '' : 's'} ran the points\n`);
  const color = colorWanted(io);
  io.stdout(flags.quiet ? `${sweepHeadline(file)}${quietWorkers(workers.chosen)}\n` : sweepText(file, { color }));
  if (changedNothing(file))
    io.stderr(
      `note: the parameters changed nothing (every point came out the same): does ${spec.job.variant === undefined ? 'the scenario' : `variant ${file.variant}`} use the engine?\n`,
    );
  for (const [flag, path, text] of [
    ['--json', flags.json, () => sweepJson(file)],
    ['--csv', flags.csv, () => sweepCsv(file)],
  ] as const) {
    if (path === undefined) continue;
    writeOutput(realIo, flag, path, text());
    if (!flags.quiet && path !== STDOUT_PATH) io.stdout(`wrote ${path}\n`);
  }
  return EXIT.ok;
}

function prepare(io: Io, arg: string, flags: SweepFlags): SweepSpec {
  const params = parseSweepParams(flags.param ?? []);
  const points = gridSize(params);
  const workers = parseWorkers(flags.workers);
  const seedCount = positiveInt('--seeds', flags.seeds, 1);
  runCap('--seeds', points, seedCount, 'points');
  const base = pointBase(io, arg, flags);
  const { run } = base;
  const metricText = (flags.metric ?? 'goodput').trim();
  const metric = metricOf(run.scenario, metricText);
  const problems = paramProblems(base, params);
  if (problems.length > 0) throw new SweepError(problems);
  // Where the files go is checked before any point runs (or is announced): a bad path costs no sweep.
  checkOutputs(io, [
    ['--json', flags.json],
    ['--csv', flags.csv],
  ]);
  if (!flags.quiet) {
    const which = run.variant === undefined ? 'as written: it has no engine variant' : `variant ${run.variant}`;
    io.stderr(
      `sweeping ${points} point${points === 1 ? '' : 's'}${seedCount > 1 ? ` × ${seedCount} seeds` : ''} of ${run.scenario.name} (${which}) on ${flags.queue === undefined ? workersText(workers, points * seedCount) : queueText(queueTarget(flags)!)}\n`,
    );
    printOverrides(io, run);
  }
  return {
    job: base.job,
    scenario: run.scenario.name,
    variant: run.name,
    seed: run.scenario.seed,
    seeds: seedCount > 1 ? seedList(run.scenario.seed, seedCount) : undefined,
    params,
    metric,
    metricText,
    workers,
    effective: { document: run.scenario.document, overrides: run.overrides },
    onDone: flags.quiet ? undefined : progress(io),
    wallNow: () => io.wallNow(),
  };
}

/** `12/12 points` on stderr: redrawn in place on a terminal, else a line per tenth of the grid. */
function progress(io: Io): (done: number, total: number) => void {
  let shown = 0;
  return (done, total) => {
    if (io.isTTY) {
      io.stderr(`\r${done}/${total} points${done === total ? '\n' : ''}`);
      return;
    }
    if (done < total && Math.floor((done * 10) / total) === shown) return;
    shown = Math.floor((done * 10) / total);
    io.stderr(`${done}/${total} points\n`);
  };
}

function metricOf(scenario: Scenario, name: string): Metric {
  try {
    return MetricCatalog.ofScenario(scenario).resolve(name);
  } catch (e) {
    if (e instanceof GateError) throw new UsageError(`--metric: ${e.message}`);
    throw e;
  }
}

/**
 * Resolves the scenario once per value of each parameter, as its points will run, so a path
 * it does not have or a value it refuses is exit 2 now, not a failed point later. A problem
 * every value of a parameter has (an unknown key) is one line for the parameter; others name
 * the value.
 */
function paramProblems(base: PointBase, params: readonly SweepParamSpec[]): string[] {
  const lines: string[] = [];
  for (const p of params) {
    const byProblem = new Map<string, string[]>();
    for (const text of p.texts) {
      for (const problem of valueProblems(base, `${p.path}=${text}`))
        byProblem.set(problem, [...(byProblem.get(problem) ?? []), text]);
    }
    for (const [problem, texts] of byProblem) {
      const which = texts.length === p.texts.length && texts.length > 1 ? p.path : `${p.path}=${texts.join(',')}`;
      lines.push(`--param ${which}: ${hint(dropPath(problem, p.path))}`);
    }
  }
  return lines;
}

/**
 * What the scenario layer says about one `path=value` on top of the base (as a point applies
 * it), without the `--set "…": ` it is blamed on. Engine options that clash (openMs above
 * maxOpenMs) are left out: another parameter of the grid may settle them, and the cells where
 * none does are refused.
 */
function valueProblems(base: PointBase, set: string): string[] {
  try {
    resolveScenario(withValues(base, [set]));
    return [];
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    const prefix = `--set ${JSON.stringify(set)}`;
    return e.problems
      .filter((p) => !isEngineClash(p))
      .map((p) => (p.startsWith(prefix) ? p.slice(p.indexOf(': ', prefix.length) + 2) : p));
  }
}

/** `engine.throttle.k: expected …` under `--param engine.throttle.k=0.5` need not name the path again. */
function dropPath(problem: string, path: string): string {
  return problem.startsWith(`${path}: `) ? problem.slice(path.length + 2) : problem;
}

/** `engine.breaker is a boolean, not a mapping`: the scenario turned it off; say how to turn it on. */
function hint(problem: string): string {
  const off = /^(.+) is a boolean, not a mapping$/.exec(problem);
  return off === null
    ? problem
    : `${problem} (the scenario turns it off; --set '${off[1]}={}' turns it on with its defaults)`;
}
