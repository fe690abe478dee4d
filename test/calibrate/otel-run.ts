import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requestLogFile } from '../../src/cli/commands/serve-flags.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { FaultPhaseInput } from '../../src/fake-upstream/fault-phases.js';
import type { RequestLogEntry } from '../../src/fake-upstream/request-log.js';
import { createFakeUpstream } from '../../src/fake-upstream/server.js';
import { tempDir } from '../cli/capture-io.js';

const APP = fileURLToPath(new URL('./otel-app/', import.meta.url));

/** What an instrumented program measured itself (see otel-app/agents.mjs): latencies in ms. */
export interface Truth {
  roots: number[];
  agents: number[];
  modelCalls: number[];
  tools: number[];
}

export interface ProgramRun<T extends Truth> {
  dir: string;
  /** `traces.jsonl` in `dir`: the program's OTLP JSON Lines. */
  traces: string;
  /** `serve.jsonl` in `dir`: the server's request log, as `stormlab serve --log` writes it. */
  serveLog: string;
  truth: T;
  /** Every model request the server answered, in order. */
  served: RequestLogEntry[];
}

/** The q-quantile of `xs`, interpolated between order statistics. */
export function quantile(xs: readonly number[], q: number): number {
  const v = [...xs].sort((a, b) => a - b);
  const i = q * (v.length - 1);
  const lo = Math.floor(i);
  return v[lo] + (v[Math.min(lo + 1, v.length - 1)] - v[lo]) * (i - lo);
}

/**
 * Runs `script` of otel-app (under `node --import ./register.mjs`, the OpenTelemetry set-up)
 * against the fake upstream `stormlab serve` runs — one model, seeded draws, `faults` in ms
 * since it started — and returns what the program, its traces and the server say.
 */
export async function runProgram<T extends Truth>(
  script: string,
  faults: FaultPhaseInput[],
  env: Record<string, string>,
): Promise<ProgramRun<T>> {
  const dir = tempDir();
  const serveLog = join(dir, 'serve.jsonl');
  const traces = join(dir, 'traces.jsonl');
  const log = requestLogFile(serveLog, dir)!;
  const served: RequestLogEntry[] = [];
  const fu = await createFakeUpstream({
    upstream: {
      models: [
        { name: 'gpt-4o-mini', slots: 512, queue: 512, ttftMs: { dist: 'lognormal', median: 60, p99: 200 }, tpotMs: 2 },
      ],
      faults,
    },
    random: new SeededRandom(28),
    requestLog: (e) => {
      served.push(e);
      log.write(e);
    },
  });
  try {
    const { code, err } = await new Promise<{ code: number | null; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', './register.mjs', script], {
        cwd: APP,
        env: {
          ...process.env,
          ...env,
          BASE_URL: `${fu.url}/v1`,
          OTLP_FILE: traces,
          TRUTH_FILE: join(dir, 'truth.json'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('exit', (c) => resolve({ code: c, err }));
    });
    if (code !== 0) throw new Error(`${script} exited ${code}: ${err}`);
  } finally {
    await fu.close();
    log.close();
  }
  const truth = JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')) as T;
  return { dir, traces, serveLog, truth, served };
}
