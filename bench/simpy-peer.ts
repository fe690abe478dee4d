import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/stormlab.js', import.meta.url));
const MODEL = fileURLToPath(new URL('./peers/simpy_retry_storm.py', import.meta.url));

/** The work both sides simulate: retry-storm (naive, as bundled) at 200 root tasks/s for 600 s. */
const RATE = 200;
const DURATION_S = 600;
const ROUNDS = 3;

/**
 * The first Python that imports SimPy: `$STORMLAB_PYTHON`, then `python3` on the PATH, then
 * Debian's own (`python3-simpy3` installs SimPy for `/usr/bin/python3` only, which a pyenv
 * `python3` earlier on the PATH does not see). Undefined when none does.
 */
function pythonWithSimpy(): string | undefined {
  const candidates = [process.env.STORMLAB_PYTHON, 'python3', '/usr/bin/python3'].filter(
    (c): c is string => c !== undefined && c !== '',
  );
  return candidates.find((py) => spawnSync(py, ['-c', 'import simpy'], { stdio: 'ignore' }).status === 0);
}

interface ProcessRun {
  wallMs: number;
  /** The whole process's CPU time (user + system), ms; undefined where it cannot be read. */
  cpuMs: number | undefined;
  stdout: string;
}

/**
 * CPU time of this process's children that have been waited for (Linux `/proc/self/stat`
 * cutime + cstime, ms; undefined elsewhere). Around a `spawnSync`, its growth is that child's
 * whole CPU time: on a busy machine far steadier than its wall time.
 */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

function whole(cmd: string, args: string[]): ProcessRun {
  const cpu0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu1 = childrenCpuMs();
  const cpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  if (r.status !== 0)
    throw new Error(`bench simpy: ${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`);
  return { wallMs, cpuMs, stdout: r.stdout };
}

/**
 * The simulator against a SimPy model of the same retry storm, whole process against whole
 * process (spawn to exit, start-up included on both sides), alternated round by round so the
 * machine's drift hits both alike; the ratio is the median of the per-round ratios. Both sides
 * must agree on what they simulated (the same attempts within 2 %: the two draw their random
 * numbers differently), or the row is refused. Skips with a note where Python or SimPy is
 * missing: the peer is a comparison, not a requirement.
 */
export function simpyPeerRows(): Row[] {
  const python = pythonWithSimpy();
  if (python === undefined) {
    console.log(
      '\nsim vs SimPy: skipped (no Python with SimPy: install Debian python3-simpy3, or set STORMLAB_PYTHON)',
    );
    return [];
  }
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-simpy-'));
  const resultFile = join(dir, 'result.json');
  const ours = [BIN, 'run', 'retry-storm', '--quiet', '--json', resultFile, '--set', `arrival.rate=${RATE}`];
  ours.push('--duration', `${DURATION_S}s`);
  const theirs = [MODEL, '--rate', String(RATE), '--duration', String(DURATION_S)];
  const rounds: Array<{
    ours: number;
    theirs: number;
    ourCpu: number | undefined;
    theirCpu: number | undefined;
    ourAttempts: number;
    theirAttempts: number;
  }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    const o = whole(process.execPath, ours);
    const t = whole(python, theirs);
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as {
      variants: Array<{ upstream: { attempts: number } }>;
    };
    const ourAttempts = result.variants[0].upstream.attempts;
    const theirAttempts = (JSON.parse(t.stdout.trim()) as { attempts: number }).attempts;
    if (Math.abs(ourAttempts - theirAttempts) > 0.02 * theirAttempts)
      throw new Error(
        `bench simpy: the two did not simulate the same storm (${ourAttempts} vs ${theirAttempts} attempts)`,
      );
    rounds.push({ ours: o.wallMs, theirs: t.wallMs, ourCpu: o.cpuMs, theirCpu: t.cpuMs, ourAttempts, theirAttempts });
  }
  rmSync(dir, { recursive: true, force: true });
  const ratios = rounds.map((r) => r.theirs / r.ours);
  const ratio = median(ratios);
  const cpuRatios = rounds.flatMap((r) =>
    r.ourCpu === undefined || r.theirCpu === undefined || r.ourCpu <= 0 ? [] : [r.theirCpu / r.ourCpu],
  );
  const last = rounds[rounds.length - 1];
  printTable(
    `sim vs SimPy: retry-storm naive, ${RATE} roots/s for ${DURATION_S} s, whole processes (median of ${ROUNDS})`,
    [
      {
        process: 'stormlab run (built bin)',
        'wall ms': median(rounds.map((r) => r.ours)),
        'CPU ms': cpuRatios.length === 0 ? '—' : median(rounds.map((r) => r.ourCpu ?? 0)),
        attempts: last.ourAttempts,
      },
      {
        process: `SimPy model (${python})`,
        'wall ms': median(rounds.map((r) => r.theirs)),
        'CPU ms': cpuRatios.length === 0 ? '—' : median(rounds.map((r) => r.theirCpu ?? 0)),
        attempts: last.theirAttempts,
      },
    ],
  );
  console.log(
    `simulator ${ratio.toFixed(1)}x faster than SimPy (goal >= 20x: ${ratio >= 20 ? 'met' : 'NOT met'}; rounds ${ratios.map((r) => r.toFixed(1)).join(', ')})`,
  );
  if (cpuRatios.length > 0)
    console.log(
      `in whole-process CPU time (steadier on a busy machine): ${median(cpuRatios).toFixed(1)}x (rounds ${cpuRatios.map((r) => r.toFixed(1)).join(', ')})`,
    );
  const cpuRows: Row[] =
    cpuRatios.length === 0
      ? []
      : [{ suite: 'cli', name: 'cli-sim-vs-simpy-cpu-ratio', value: Number(median(cpuRatios).toFixed(2)), unit: 'x' }];
  return [
    ...cpuRows,
    { suite: 'cli', name: 'cli-sim-vs-simpy-ratio', value: Number(ratio.toFixed(2)), unit: 'x' },
    { suite: 'cli', name: 'cli-sim-vs-simpy-ratio-min', value: Number(Math.min(...ratios).toFixed(2)), unit: 'x' },
    { suite: 'cli', name: 'cli-sim-vs-simpy-ratio-max', value: Number(Math.max(...ratios).toFixed(2)), unit: 'x' },
  ];
}
