import { colorWanted } from '../color-wanted.js';
import { progressLine } from '../../report/progress-line.js';
import { resultJson } from '../../report/result-json.js';
import { summaryTable } from '../../report/summary-table.js';
import { withNotes } from '../../report/result-notes.js';
import type { Check, ResultFile } from '../../run/metrics/result.js';
import type { Scenario } from '../../scenario/scenario.js';
import { formatDuration } from '../../scenario/duration.js';
import { budgetNotes } from '../../scenario/budget-notes.js';
import { effectiveScenarios } from '../../scenario/effective-scenario.js';
import type { EffectiveRun, ScenarioRequest } from '../../scenario/scenario-request.js';
import { EXIT, stopCause, stopExit, UsageError, type Io, type StopCause } from '../io.js';
import { Playback, parseSpeed } from '../playback.js';
import { oneVariant, scenarioSets, variantList, type ScenarioFlags } from '../scenario-args.js';
import { checkOutputs, STDOUT_PATH, writeOutput } from '../write-output.js';
import { expectationsOf } from '../expectations.js';
import { reportChecks, type GateFlags } from '../gate-outputs.js';
import { evaluateExpectations } from '../../gate/evaluate-expectations.js';
import type { Expectation } from '../../gate/expectation.js';
import type { LiveFlags } from './run-live.js';
import type { FleetFlags } from './run-fleet.js';
import { partialIf, type Executed } from './executed.js';
import { advanceAll, collect, startRuns } from './run-variants.js';

export interface RunFlags extends ScenarioFlags, LiveFlags, FleetFlags, GateFlags {
  /** A fleet run that lost a worker's share exits 0 (or 1 for a failed expectation) rather than 3. */
  allowPartial?: boolean;
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
/** Steps per tenth of a plain run, and how long one may run before the process looks at its signals. */
const SUBSTEPS = 50;
const YIELD_MS = 50;

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
): Promise<Executed> {
  // The live driver (undici) and the dashboard (Ink, React) load only when used: a quiet run needs neither.
  if (isLive(flags)) return (await import('./run-live.js')).executeLive(io, scenario, runs, flags);
  const speed = parseSpeed(flags.speed, scenario.durationMs);
  if (speed === undefined)
    throw new UsageError(`--speed: expected a speed like 10x, 0.5x or max, got ${JSON.stringify(flags.speed)}`);
  const sims = startRuns(runs);
  const playback = new Playback(scenario, sims, speed, (t) => advanceAll(io, sims, t));
  let signal: StopCause | undefined;
  const offStop = io.onStop?.((s) => {
    signal = stopCause(s);
    playback.stop();
  });
  try {
    if (io.terminal !== undefined && flags.ui !== false && io.env.CI !== 'true' && !flags.quiet) {
      const { showDashboard } = await import('../dashboard.js');
      await showDashboard(io, io.terminal, playback, (wallMs) => playback.tick(wallMs));
    } else {
      // Small steps, and a turn of the event loop whenever one has taken a while: a signal stops even a long
      // simulation within a fraction of a second. A step costs next to nothing when little happens in it.
      let yielded = performance.now();
      for (let k = 1; k <= PLAIN_STEPS * SUBSTEPS && !playback.done; k++) {
        const last = k === PLAIN_STEPS * SUBSTEPS;
        playback.advanceTo(last ? Infinity : (scenario.durationMs * k) / (PLAIN_STEPS * SUBSTEPS));
        if (k % SUBSTEPS === 0 && !flags.quiet) io.stderr(`${progressLine(playback.frame())}\n`); // stdout: summary only
        if (offStop !== undefined && performance.now() - yielded > YIELD_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          yielded = performance.now();
        }
      }
    }
  } finally {
    offStop?.();
  }
  // q and Ctrl-C in the dashboard are keys, not signals: the user's stop, as SIGINT is.
  const stop = playback.interrupted ? (signal ?? 'SIGINT') : undefined;
  if (stop !== undefined)
    io.stderr(
      `stopped at ${formatDuration(playback.now)} of ${formatDuration(scenario.durationMs)}: the result below is partial\n`,
    );
  return partialIf(collect(scenario.name, scenario.seed, sims), stop, playback.now);
}

/** What a check of a stopped run says instead of passing or failing on a part of the data. */
const NOT_JUDGED = 'not judged: the run was stopped before its end (partial result)';

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
    ['--settle-quiet', flags.settleQuiet],
    ['--settle-timeout', flags.settleTimeout],
    ['--queue', flags.queue],
    ['--workers', flags.workers],
    ['--fleet-wait', flags.fleetWait],
  ] as const;
  const given = liveOnly.find(([, v]) => v !== undefined);
  if (given !== undefined) throw new UsageError(`${given[0]}: only with --mode live`);
  return false;
}

/** A finished run or compare, the documents that ran, and the expectations to judge it by. */
export interface RunOutcome extends Executed {
  runs: EffectiveRun[];
  expectations: Expectation[];
}

/**
 * Writes what a finished run or compare shows: the summary (or headline), then the judged
 * expectations, and the --json/--junit/--markdown files. Exit 1 when an expectation failed.
 * @public (loaded on use by cli/define-run.ts)
 */
export function report(realIo: Io, outcome: RunOutcome, flags: RunFlags): number {
  const { expectations, stop } = outcome;
  // `--json -`: stdout is the JSON alone, so a pipe gets a file; everything else goes to stderr.
  const toStdout = flags.json === STDOUT_PATH;
  const io: Io = toStdout ? { ...realIo, stdout: (t) => realIo.stderr(t) } : realIo;
  const judged = evaluateExpectations(expectations, outcome.file);
  // Part of a run proves nothing either way: its checks are listed, skipped, and the exit says it stopped.
  const checks =
    stop === undefined ? judged : judged.map((c) => ({ ...c, status: 'skip' as const, message: NOT_JUDGED }));
  const file = withNotes(expectations.length > 0 ? { ...outcome.file, checks } : outcome.file, {
    drainMs: Object.fromEntries(outcome.runs.map((r) => [r.name, r.scenario.drainMs])),
    stopped:
      stop === undefined
        ? undefined
        : { atMs: outcome.stoppedAtMs ?? 0, durationMs: outcome.runs[0].scenario.durationMs },
  });
  const table = summaryTable(file, { color: colorWanted(io), width: 80 });
  io.stdout(flags.quiet ? quietSummary(file, table) : `${table.trimEnd()}\n`);
  // The result first: a --junit path that cannot be written must not cost the run's JSON.
  if (flags.json !== undefined) writeOutput(realIo, '--json', flags.json, resultJson(file));
  const code = judge(io, file, checks, flags);
  if (flags.json !== undefined && !toStdout && !flags.quiet) io.stdout(`wrote ${flags.json}\n`);
  if (stop !== undefined) return stopExit(stop);
  // A fleet worker lost: the figures are what the others drove, never the whole run — unless the user accepts that.
  const lost = (file.notes ?? []).some((n) => n.kind === 'lost-share');
  return lost && flags.allowPartial !== true ? EXIT.partial : code;
}

/** The output flags of run and compare, checked before the run so that a bad path costs none. */
function checkRunOutputs(io: Io, flags: RunFlags): void {
  checkOutputs(io, [
    ['--json', flags.json],
    ['--junit', flags.junit],
    ['--markdown', flags.markdown],
  ]);
}

/** The judged expectations, when there are any or a gate file was asked for; the exit code. */
function judge(io: Io, file: ResultFile, checks: Check[], flags: RunFlags): number {
  if (checks.length === 0 && flags.junit === undefined && flags.markdown === undefined) return EXIT.ok;
  // Expectations of variants this run did not make are skipped: listed in JUnit and Markdown,
  // one note in the summary rather than a row each (`run` of a scenario whose expect: is for compare).
  const ran = checks.filter((c) => file.variants.some((v) => v.name === c.group));
  return reportChecks(io, gateTitle(file), checks, flags, ran, file.notes);
}

/**
 * `-q`: the headline, and each note about how its figures read (a stopped run, roots the drain
 * cut off, no roots at all) on its own line — a figure without its note reads wrong.
 */
function quietSummary(file: ResultFile, table: string): string {
  const notes = (file.notes ?? []).filter((n) => n.kind !== 'skipped-expectations');
  return `${[table.split('\n')[0], ...notes.map((n) => `note: ${n.message}`)].join('\n')}\n`;
}

/** How JUnit and Markdown name the gate: `stormlab retry-storm`. */
function gateTitle(file: ResultFile): string {
  return `stormlab ${file.scenario}`;
}

/**
 * What the command line asks to run: the scenario, the variants, the command line's overrides
 * (which win over the variant's) — answered by the scenario layer in one call.
 */
function request(
  io: Io,
  arg: string,
  flags: RunFlags,
  variants: ScenarioRequest['variants'],
  flag: string,
): ScenarioRequest {
  return { arg, cwd: io.cwd, set: scenarioSets(flags), variants, flag, checkFile: true };
}

async function runAll(io: Io, req: ScenarioRequest, flags: RunFlags): Promise<RunOutcome> {
  checkRunOutputs(io, flags);
  const { runs } = await effectiveScenarios(req);
  for (const note of budgetNotes(runs)) io.stderr(`note: ${note}\n`);
  const scenario = runs[0].scenario;
  // The expect: list is the file's: its problems are named after the file, not the variant that runs.
  const expectations = expectationsOf({ ...scenario, source: req.arg }, flags.expect);
  const executed = await execute(io, scenario, runs, flags);
  return { ...executed, file: withEffective(executed.file, runs), runs, expectations };
}

/** Each variant's result with the document that ran and the fields its variant and the command line set. */
function withEffective(file: ResultFile, runs: readonly EffectiveRun[]): ResultFile {
  return {
    ...file,
    variants: file.variants.map((v) => {
      const run = runs.find((r) => r.name === v.name);
      return run === undefined ? v : { ...v, effective: { document: run.scenario.document, overrides: run.overrides } };
    }),
  };
}

/** `stormlab run <scenario>`: one run of the scenario as written (or of one variant).
 * @public (loaded on use by cli/define-run.ts)
 */
export function runCommand(io: Io, arg: string, flags: RunFlags): Promise<RunOutcome> {
  const variant = flags.variant === undefined ? undefined : [oneVariant(flags.variant)];
  return runAll(io, request(io, arg, flags, variant, '--variant'), flags);
}

/** `stormlab compare <scenario>`: the same scenario and seed under each policy variant.
 * @public (loaded on use by cli/define-run.ts)
 */
export function compareCommand(io: Io, arg: string, flags: RunFlags): Promise<RunOutcome> {
  const variants = flags.variants === undefined ? 'all' : variantList(flags.variants, '--variants');
  return runAll(io, request(io, arg, flags, variants, '--variants'), flags);
}
