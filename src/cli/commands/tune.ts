import { MetricCatalog } from '../../gate/metric-catalog.js';
import { isEngineClash } from '../../explore/point-refusal.js';
import { RefusedError } from '../../explore/refused-error.js';
import { PointPool, type WorkerCount } from '../../explore/run-points.js';
import type { SearchRound } from '../../explore/search-space.js';
import { tune, type TuneSpec } from '../../explore/tune.js';
import { currentValue } from '../../explore/tune-current.js';
import { TuneError } from '../../explore/tune-error.js';
import { parseGoal, type GoalFlags, type TuneGoal } from '../../explore/tune-goal.js';
import { parseTuneParams, type TuneParam } from '../../explore/tune-params.js';
import { knobOf } from '../../explore/tune-ranges.js';
import { formatFigure } from '../../report/format.js';
import { paramValue, shellWord, tuneHeadline, tuneReport } from '../../report/tune-report.js';
import { SEARCH_DEFAULTS } from '../../explore/search-space.js';
import { seedList } from '../../explore/seed-stats.js';
import { heldUntilQueue, openQueue, queueTarget, queueText, queueWaitMs } from './queue-args.js';
import { resolveScenario } from '../../scenario/resolve-scenario.js';
import { ScenarioError } from '../../scenario/scenario-error.js';
import type { Scenario } from '../../scenario/scenario.js';
import { EXIT, UsageError, type Io } from '../io.js';
import type { ScenarioFlags } from '../scenario-args.js';
import {
  parseWorkers,
  pointBase,
  positiveInt,
  runCap,
  printOverrides,
  quietWorkers,
  withValues,
  workerReporter,
  workersText,
  type PointBase,
} from './explore-args.js';
import { checkOutputs, STDOUT_PATH, textIo, writeOutput } from '../write-output.js';
import { PointsStop, stoppedExit } from './points-stop.js';

/**
 * Seeds a tune judges each point on unless --seeds says otherwise: one seed cannot tell a
 * better setting from a lucky draw; five give a 95 % interval (t with 4 degrees of freedom)
 * and a paired comparison with the current values on the same seeds.
 */
export const TUNE_SEEDS = 5;

export interface TuneFlags extends ScenarioFlags, GoalFlags {
  /** Each --params list as given; repeated lists add up. */
  params?: string[];
  variant?: string;
  workers?: string;
  seeds?: string;
  /** A Redis URL: the points go on a BullMQ queue for `stormlab worker`s. */
  queue?: string;
  /** How long the queue's Redis may be away before the command fails (a duration). */
  queueWait?: string;
  budget?: string;
  json?: string;
  quiet?: boolean;
}

/**
 * `stormlab tune <scenario>`: searches the parameters by simulation for the best objective
 * under the constraints and prints it as a ready-to-paste engine block, with the figures
 * beside the scenario's current values. Every flag is checked before anything runs.
 */
export async function tuneCommand(realIo: Io, arg: string, flags: TuneFlags): Promise<number> {
  const io = textIo(realIo, [flags.json]);
  const queue = queueTarget(flags);
  const queueWait = queueWaitMs(flags);
  const announce = heldUntilQueue(io, queue !== undefined);
  const spec = prepare(announce.io, arg, flags);
  // One pool (or queue) for every round: the worker threads start once, not once a round.
  const remote =
    queue === undefined ? undefined : await openQueue(queue, spec.job, { waitMs: queueWait, say: io.stderr });
  announce.flush();
  const pool = remote === undefined ? new PointPool(spec.job, spec.workers) : undefined;
  const workers = workerReporter(io, flags.quiet);
  const onRound = flags.quiet ? undefined : (r: SearchRound): void => io.stderr(`${roundLine(spec, r)}\n`);
  const stop = new PointsStop(io);
  const ran = await stop.race(
    tune(
      { ...spec, onRound, onWorkers: workers.onWorkers },
      stop.wrap(remote?.run ?? ((_job, points, o) => pool!.run(points, o.onDone, o.onWorkers, o.signal))),
    )
      .catch(badPoint)
      .finally(() => (remote ?? pool)!.close()),
  );
  if ('stopped' in ran) {
    await (remote ?? pool)!.close().catch(() => {});
    return stoppedExit(io, 'tune', ran.stopped);
  }
  const file = ran.value;
  if (remote !== undefined && !flags.quiet)
    io.stderr(`queue: ${remote.workers()} worker${remote.workers() === 1 ? '' : 's'} ran the points\n`);
  io.stdout(
    flags.quiet
      ? `${tuneHeadline(file)}${quietWorkers(workers.chosen)}\n`
      : tuneReport(file, { runArgs: runArgs(arg, flags, spec.job.variant) }),
  );
  if (flags.json !== undefined) {
    writeOutput(realIo, '--json', flags.json, `${JSON.stringify(file, null, 2)}\n`);
    if (!flags.quiet && flags.json !== STDOUT_PATH) io.stdout(`wrote ${flags.json}\n`);
  }
  return file.feasible ? EXIT.ok : EXIT.failed;
}

function prepare(io: Io, arg: string, flags: TuneFlags): TuneSpec {
  const budget = positiveInt('--budget', flags.budget, SEARCH_DEFAULTS.budget);
  const workers = parseWorkers(flags.workers);
  const seedCount = positiveInt('--seeds', flags.seeds, TUNE_SEEDS);
  runCap('--seeds', budget + 1, seedCount, 'points (--budget and the current values)');
  const params = fromTuneError('--params', () => {
    if (flags.params === undefined)
      throw new TuneError('give the parameters to tune, e.g. --params engine.throttle.k,engine.retryBudget.ratio');
    return parseTuneParams(flags.params.join(','));
  });
  const base = pointBase(io, arg, flags);
  const { run } = base;
  const resolved = run.scenario;
  const variant = run.name;
  const asWritten = run.variant === undefined;
  const goal = fromTuneError(undefined, () =>
    parseGoal(
      flags,
      MetricCatalog.ofScenario(resolved),
      [...resolved.variants.map((v) => v.name), resolved.name],
      variant,
    ),
  );
  checkParams(base, params);
  // Where the file goes is checked before any point runs (or is announced): a bad path costs no search.
  checkOutputs(io, [['--json', flags.json]]);
  if (!flags.quiet) {
    const which = asWritten
      ? 'the scenario as written (it has no engine variant)'
      : flags.variant === undefined
        ? 'variant engine (--variant to pick another)'
        : `variant ${variant}`;
    io.stderr(
      `tuning ${params.map((p) => p.path).join(', ')} of ${resolved.name}, ${which}: up to ${budget} points + the current values, ${seedCount === 1 ? 'one seed' : `${seedCount} seeds`} each, ${flags.queue === undefined ? workersText(workers, (budget + 1) * seedCount) : `on ${queueText(queueTarget(flags)!)}`}\n`,
    );
    printOverrides(io, run);
    notes(io, resolved, variant, params, goal);
  }
  const seeds = seedCount > 1 ? seedList(resolved.seed, seedCount) : undefined;
  return spec(io, { base, params, goal, budget, workers, seeds });
}

interface Prepared {
  base: PointBase;
  params: TuneParam[];
  goal: TuneGoal;
  budget: number;
  workers: WorkerCount;
  seeds: number[] | undefined;
}

function spec(io: Io, p: Prepared): TuneSpec {
  const { base, params, goal, budget, workers, seeds } = p;
  const resolved = base.run.scenario;
  return {
    job: base.job,
    scenario: resolved.name,
    variant: base.run.name,
    seed: resolved.seed,
    durationMs: resolved.durationMs,
    params: params.map((p) => ({ ...p, current: currentValue(resolved, p) })),
    goal,
    budget,
    seeds,
    effective: { document: resolved.document, overrides: base.run.overrides },
    workers,
    wallNow: () => io.wallNow(),
  };
}

/**
 * A point whose mix of values the scenario or the engine refuses (only the ends of each range
 * are checked up front; pairs such as breaker.maxOpenMs >= openMs only when a point is built)
 * is infeasible and the search goes on; only a search with every point refused, or a refused
 * baseline, is the user's to fix: exit 2 on one line, without the engine's stack.
 */
function badPoint(e: unknown): never {
  if (e instanceof RefusedError) throw new UsageError(`--params: ${e.message}`);
  throw e;
}

function fromTuneError<T>(flag: string | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof TuneError) throw new UsageError(flag === undefined ? e.message : `${flag}: ${e.message}`);
    throw e;
  }
}

/** The scenario and shared flags of the `stormlab run` line that reproduces the answer. */
function runArgs(arg: string, flags: TuneFlags, variant: string | undefined): string {
  const words = [arg, ...(variant === undefined ? [] : ['--variant', variant])];
  for (const s of flags.set ?? []) words.push('--set', s);
  if (flags.duration !== undefined) words.push('--duration', flags.duration);
  if (flags.seed !== undefined) words.push('--seed', flags.seed);
  return words.map(shellWord).join(' ');
}

/**
 * Resolves the scenario with every parameter at the low ends of its range, then at the high
 * ends, as its points will run, so a path the scenario does not have, or a range it refuses,
 * is exit 2 now rather than in the middle of the search. Engine options that clash there
 * (openMs above maxOpenMs) are no fault of either range: such points are refused in the
 * search, which goes on.
 */
function checkParams(base: PointBase, params: readonly TuneParam[]): void {
  for (const end of ['min', 'max'] as const) {
    const sets = params.map((p) => `${p.path}=${paramValue(p, p[end])}`);
    try {
      resolveScenario(withValues(base, sets));
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      const problem = e.problems.find((p) => !isEngineClash(p));
      if (problem !== undefined) throw new UsageError(`--params: ${paramProblem(problem, e.source)}`);
    }
  }
}

/** `--set "engine.budget.ratio=0.05": engine.budget: unknown key` → `engine.budget.ratio at 0.05: engine.budget: unknown key`. */
function paramProblem(problem: string, source: string): string {
  const m = /^--set "([^"=]+)=([^"]*)"(?: with variants? [^:]+)?: (.*)$/.exec(problem);
  if (m === null) return `${source}: ${problem}`;
  const off = /^(.+) is a boolean, not a mapping$/.exec(m[3]);
  const hint =
    off === null ? '' : ` (${off[1]}: false turns it off; --set '${off[1]}={}' turns it on with its defaults)`;
  return `${m[1]} at ${m[2]}: ${m[3]}${hint}`;
}

/** Warnings worth a line before a long search: knobs that cannot matter, an objective read backwards. */
function notes(io: Io, scenario: Scenario, variant: string, params: readonly TuneParam[], goal: TuneGoal): void {
  const engineLayers = scenario.traffic.layers.filter((l) => l.retry.policy === 'engine').length;
  if (engineLayers === 0 && params.some((p) => knobOf(p.path) !== undefined)) {
    io.stderr(
      `note: no layer of ${variant} retries with the engine (retry policy engine), so engine knobs change nothing\n`,
    );
  }
  const backwards = goal.direction === 'maximize' ? !goal.objective.higherIsBetter : goal.objective.higherIsBetter;
  if (backwards)
    io.stderr(
      `note: ${goal.direction === 'maximize' ? 'more' : 'less'} ${goal.objectiveText} is usually worse; did you mean --${goal.direction === 'maximize' ? 'minimize' : 'maximize'}?\n`,
    );
}

/** `round 2: 16 new points in throttle.k 1–2.5, retryBudget.ratio 0.0316–0.178; best so far …`. */
function roundLine(spec: TuneSpec, r: SearchRound): string {
  const box = spec.params
    .map(
      (p, i) =>
        `${p.path} ${paramValue(p, Number(r.box[i][0].toPrecision(3)))}–${paramValue(p, Number(r.box[i][1].toPrecision(3)))}`,
    )
    .join(', ');
  const best = spec.params.map((p, i) => `${p.path}=${paramValue(p, r.best.point[i])}`).join(' ');
  const s = r.best.score;
  const obj = formatFigure(spec.goal.objective.unit, s.objective);
  return `round ${r.round}: ${r.evaluated} point${r.evaluated === 1 ? '' : 's'} in ${box}; best so far ${best} (${spec.goal.objectiveText} ${obj}${s.violation === 0 ? '' : ', constraints not met'})`;
}
