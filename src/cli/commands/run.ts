import { progressLine } from '../../report/progress-line.js';
import { resultJson } from '../../report/result-json.js';
import { summaryTable } from '../../report/summary-table.js';
import type { Check, ResultFile } from '../../run/metrics/result.js';
import type { Scenario } from '../../scenario/scenario.js';
import { formatDuration } from '../../scenario/duration.js';
import { showDashboard } from '../dashboard.js';
import { EXIT, UsageError, type Io } from '../io.js';
import { Playback, parseSpeed } from '../playback.js';
import { pickVariants, scenarioFromFlags, type ScenarioFlags } from '../scenario-args.js';
import { writeOutput } from '../write-output.js';
import { expectationsOf } from '../expectations.js';
import { reportChecks, type GateFlags } from '../gate-outputs.js';
import { evaluateExpectations } from '../../gate/evaluate-expectations.js';
import type { Expectation } from '../../gate/expectation.js';
import { executeLive, type LiveFlags } from './run-live.js';
import { advanceAll, collect, startRuns } from './run-variants.js';

export interface RunFlags extends ScenarioFlags, LiveFlags, GateFlags {
  json?: string;
  quiet?: boolean;
  /** Expectations given on the command line (repeatable), judged with the scenario's own. */
  expect?: string[];
  variant?: string;
  variants?: string;
  /** False with --no-ui. */
  ui?: boolean;
  speed?: string;
  /** `sim` (default) or `live`. */
  mode?: string;
}

/** Progress lines a plain (non-TTY) run prints: one per tenth of the run, and the end. */
const PLAIN_STEPS = 10;

/**
 * Simulates the runs: in a TTY (and not under CI or --no-ui) in the dashboard, played back at
 * --speed; otherwise with a plain progress line per tenth of the run. Either way the result is
 * the same, and a run stopped with q or Ctrl-C still gives its partial result.
 */
async function execute(
  io: Io,
  scenario: Scenario,
  runs: Array<{ name: string; scenario: Scenario }>,
  flags: RunFlags,
): Promise<ResultFile> {
  if (isLive(flags)) return executeLive(io, scenario, runs, flags);
  const speed = parseSpeed(flags.speed, scenario.durationMs);
  if (speed === undefined)
    throw new UsageError(`--speed: expected a speed like 10x, 0.5x or max, got ${JSON.stringify(flags.speed)}`);
  const sims = startRuns(runs);
  const playback = new Playback(scenario, sims, speed, (t) => advanceAll(io, sims, t));
  if (io.terminal !== undefined && flags.ui !== false && io.env.CI !== 'true' && !flags.quiet) {
    await showDashboard(io, io.terminal, playback, (wallMs) => playback.tick(wallMs));
    if (playback.interrupted)
      io.stderr(
        `stopped at ${formatDuration(playback.now)} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
      );
  } else {
    for (let k = 1; k <= PLAIN_STEPS && !playback.done; k++) {
      playback.advanceTo(k === PLAIN_STEPS ? Infinity : (scenario.durationMs * k) / PLAIN_STEPS);
      if (!flags.quiet) io.stderr(`${progressLine(playback.frame())}\n`); // stdout keeps only the summary
    }
  }
  return collect(scenario.name, scenario.seed, sims);
}

/** `--mode live`, checked, with the flags that only make sense with it. */
function isLive(flags: RunFlags): boolean {
  const mode = flags.mode ?? 'sim';
  if (mode !== 'sim' && mode !== 'live')
    throw new UsageError(`--mode: expected sim or live, got ${JSON.stringify(flags.mode)}`);
  if (mode === 'live') {
    if (flags.speed !== undefined)
      throw new UsageError('--speed: a live run goes at real time; --speed is for simulated runs');
    return true;
  }
  const liveOnly = [
    ['--target', flags.target],
    ['--header', flags.header],
    ['--connections', flags.connections],
    ['--upstream', flags.upstream],
  ] as const;
  const given = liveOnly.find(([, v]) => v !== undefined);
  if (given !== undefined) throw new UsageError(`${given[0]}: only with --mode live`);
  return false;
}

/** A finished run or compare, and the expectations to judge it by. */
export interface RunOutcome {
  file: ResultFile;
  expectations: Expectation[];
}

/**
 * Writes what a finished run or compare shows: the summary (or headline), then the judged
 * expectations, and the --json/--junit/--markdown files. Exit 1 when an expectation failed.
 */
export function report(io: Io, outcome: RunOutcome, flags: RunFlags): number {
  const { expectations } = outcome;
  const checks = evaluateExpectations(expectations, outcome.file);
  const file: ResultFile = expectations.length > 0 ? { ...outcome.file, checks } : outcome.file;
  const table = summaryTable(file, { color: io.isTTY && io.env.NO_COLOR === undefined, width: 80 });
  io.stdout(flags.quiet ? `${table.split('\n')[0]}\n` : `${table.trimEnd()}\n`);
  // The result first: a --junit path that cannot be written must not cost the run's JSON.
  if (flags.json !== undefined) writeOutput(io, '--json', flags.json, resultJson(file));
  const code = judge(io, file, checks, flags);
  if (flags.json !== undefined && !flags.quiet) io.stdout(`wrote ${flags.json}\n`);
  return code;
}

/** The judged expectations, when there are any or a gate file was asked for; the exit code. */
function judge(io: Io, file: ResultFile, checks: Check[], flags: RunFlags): number {
  if (checks.length === 0 && flags.junit === undefined && flags.markdown === undefined) return EXIT.ok;
  // Expectations of variants this run did not make are skipped: listed in JUnit and Markdown,
  // one line here rather than a row each (`run` of a scenario whose expect: is for compare).
  const ran = checks.filter((c) => file.variants.some((v) => v.name === c.group));
  const code = reportChecks(io, gateTitle(file), checks, flags, ran);
  const notRun = [...new Set(checks.filter((c) => !ran.includes(c)).map((c) => c.group))];
  if (notRun.length > 0 && !flags.quiet) {
    const n = checks.length - ran.length;
    io.stdout(
      `${n} ${n === 1 ? 'expectation is' : 'expectations are'} for ${notRun.length === 1 ? 'a variant' : 'variants'} not run here (${notRun.join(', ')}): compare runs them\n`,
    );
  }
  return code;
}

/** How JUnit and Markdown name the gate: `stormlab retry-storm`. */
function gateTitle(file: ResultFile): string {
  return `stormlab ${file.scenario}`;
}

/** `stormlab run <scenario>`: one run of the scenario as written (or of one variant). */
export async function runCommand(io: Io, arg: string, flags: RunFlags): Promise<RunOutcome> {
  if (flags.variant !== undefined && (flags.variant.includes(',') || flags.variant.trim() === '')) {
    throw new UsageError(
      `--variant: expected one variant name (compare --variants a,b runs several), got ${JSON.stringify(flags.variant)}`,
    );
  }
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  const runs =
    flags.variant === undefined
      ? [{ name: scenario.name, scenario }]
      : pickVariants(scenario, flags.variant, '--variant');
  const expectations = expectationsOf(scenario, flags.expect);
  return { file: await execute(io, scenario, runs, flags), expectations };
}

/** `stormlab compare <scenario>`: the same scenario and seed under each policy variant. */
export async function compareCommand(io: Io, arg: string, flags: RunFlags): Promise<RunOutcome> {
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  const runs = pickVariants(scenario, flags.variants);
  const expectations = expectationsOf(scenario, flags.expect);
  return { file: await execute(io, scenario, runs, flags), expectations };
}
