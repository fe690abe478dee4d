import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import { scriptedGateway } from '../helpers/scripted-gateway.js';
import { tempDir } from './capture-io.js';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'stormlab.js');

/** A long storm behind a gateway: whatever stops it, the upstream must get its own faults back. */
const SCENARIO = `
name: gateway-exits
duration: 30s
drain: 5s
arrival: { type: constant, rate: 20 }
tokens: { prompt: 50, completion: 10 }
layers:
  - { name: llm, retry: { policy: none } }
upstream:
  faults: [{ kind: outage, from: 0s, to: 10m, status: 503 }]
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 5ms, tpot: 0 }
live: { connections: 16 }
`;

/** Throws, from nowhere any code of the CLI could catch, when the process gets SIGUSR2. */
const CRASH = `process.on('SIGUSR2', () => setImmediate(() => { throw new Error('injected by the test'); }));\n`;

/** serve's own fault phase, an hour away: what it must have again after the run, exactly. */
const OWN = [{ kind: 'latency' as const, fromMs: 3_600_000, factor: 2 }];

const dir = tempDir({ 'exits.yaml': SCENARIO, 'crash.mjs': CRASH });
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function stack(backoffMs = 50) {
  const fake: FakeUpstream = await createFakeUpstream({
    upstream: { models: [{ name: 'primary', slots: 64, queue: 64, ttftMs: 5, tpotMs: 0 }], faults: OWN },
    port: 0,
  });
  closers.push(() => fake.close());
  const gw = await scriptedGateway({ upstream: fake.url, attempts: 3, backoffMs });
  closers.push(() => gw.close());
  return { fake, gw };
}

interface Child {
  proc: ChildProcess;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], preload: string[] = []): Child {
  const proc = spawn(process.execPath, [...preload, BIN, ...args], {
    cwd: dir,
    env: { ...withoutCi(), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => void (err += String(d)));
  proc.stdout!.resume();
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, stderr: () => err, exit };
}

/** Polls `ok` every 20 ms until it holds (at most `ms`). */
async function until(ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The environment without CI: Ink takes a CI variable, even an empty one, as CI and draws only the last frame. */
function withoutCi(): NodeJS.ProcessEnv {
  const { CI: _ci, ...env } = process.env;
  return env;
}

const installed = (fake: FakeUpstream) => fake.faults().some((f) => f.kind === 'outage');
const ownFaults = (fake: FakeUpstream) => fake.faults().map(({ kind, fromMs, factor }) => ({ kind, fromMs, factor }));

function gatewayRun(fake: FakeUpstream, gw: string, ...more: string[]): string[] {
  return [
    'run',
    'exits.yaml',
    '--mode',
    'live',
    '--target',
    gw,
    '--upstream',
    fake.url,
    '--no-ui',
    '--json',
    'out.json',
    '--settle-quiet',
    '300ms',
    ...more,
  ];
}

describe('gateway mode: the upstream gets its own faults back on every way out (real process)', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('SIGINT: the driver stops, hop 2 still settles, then the faults are put back; exit 130', async () => {
    const { fake, gw } = await stack();
    const child = start(gatewayRun(fake, gw.url));
    await until(() => installed(fake) && gw.counts.received > 10);
    child.proc.kill('SIGINT');
    const { code } = await child.exit;
    expect(code).toBe(130);
    expect(child.stderr()).toMatch(/stopping: hop 2 is read once .* has had nothing in flight for 300ms/);
    expect(ownFaults(fake)).toEqual(OWN);
    const file = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
    expect(file.partial).toBe(true);
    const hop = file.variants[0].live.upstream;
    expect(hop.settle.outcome).toBe('quiet');
    await gw.idle();
    expect(hop.reached).toBe(gw.counts.forwarded);
  }, 40_000);

  it('a second SIGINT while hop 2 settles reads it at once, marked skipped; the faults still go back', async () => {
    // Two seconds between the gateway's tries: hop 2 is far from settled when the second signal comes.
    const { fake, gw } = await stack(2000);
    const child = start(gatewayRun(fake, gw.url, '--settle-quiet', '5s'));
    await until(() => installed(fake) && gw.counts.received > 10);
    child.proc.kill('SIGINT');
    await until(() => child.stderr().includes('stopping: hop 2'));
    child.proc.kill('SIGINT');
    const { code } = await child.exit;
    expect(code).toBe(130);
    expect(ownFaults(fake)).toEqual(OWN);
    const hop = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')).variants[0].live.upstream;
    expect(hop.settle).toMatchObject({ settled: false, outcome: 'skipped' });
  }, 40_000);

  it('SIGTERM: no waiting for hop 2, the faults put back; exit 143', async () => {
    const { fake, gw } = await stack();
    const child = start(gatewayRun(fake, gw.url));
    await until(() => installed(fake) && gw.counts.received > 10);
    child.proc.kill('SIGTERM');
    const { code } = await child.exit;
    expect(code).toBe(143);
    expect(ownFaults(fake)).toEqual(OWN);
    const hop = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')).variants[0].live.upstream;
    expect(hop.settle.outcome).toBe('skipped');
  }, 40_000);

  it('a closed output pipe (the reader of `| head` gone: EPIPE): stopped, the faults put back; exit 141', async () => {
    const { fake, gw } = await stack();
    // Progress lines go to stderr, the summary to stdout: both pipes are closed under it.
    const child = start([...gatewayRun(fake, gw.url), '--duration', '20s']);
    await until(() => installed(fake) && child.stderr().includes('\n'));
    child.proc.stdout!.destroy();
    child.proc.stderr!.destroy();
    const { code, signal } = await child.exit;
    expect(signal).toBeNull(); // not killed by SIGPIPE: it heard it, and ended by itself
    expect(code).toBe(141);
    expect(ownFaults(fake)).toEqual(OWN);
    const file = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
    expect(file.partial).toBe(true);
  }, 40_000);

  it('SIGPIPE sent to the process: the same', async () => {
    const { fake, gw } = await stack();
    const child = start(gatewayRun(fake, gw.url));
    await until(() => installed(fake) && gw.counts.received > 10);
    child.proc.kill('SIGPIPE');
    const { code } = await child.exit;
    expect(code).toBe(141);
    expect(ownFaults(fake)).toEqual(OWN);
  }, 40_000);

  it('an uncaught error: printed, the faults put back, exit 70', async () => {
    const { fake, gw } = await stack();
    const child = start(gatewayRun(fake, gw.url), ['--import', join(dir, 'crash.mjs')]);
    await until(() => installed(fake) && gw.counts.received > 10);
    child.proc.kill('SIGUSR2');
    const { code } = await child.exit;
    expect(code).toBe(70);
    expect(child.stderr()).toMatch(/stormlab: internal error: Error: injected by the test/);
    expect(ownFaults(fake)).toEqual(OWN);
  }, 40_000);

  it('q in the dashboard (a real terminal): the run stops, hop 2 settles, the faults go back; exit 130', async () => {
    const { fake, gw } = await stack();
    const session = `stormlab-gw-${process.pid}`;
    const rc = join(dir, 'rc');
    const args = gatewayRun(fake, gw.url).filter((a) => a !== '--no-ui');
    const command = `cd ${JSON.stringify(dir)} && env -u CI NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args.join(' ')}; echo $? > ${rc}; sleep 600`;
    const tmux = (a: string[]) => spawnSync('tmux', a, { encoding: 'utf8', timeout: 30_000 });
    expect(tmux(['new-session', '-d', '-s', session, '-x', '120', '-y', '40', command]).status).toBe(0);
    try {
      await until(() => installed(fake) && gw.counts.received > 20);
      await until(() => tmux(['capture-pane', '-p', '-t', session]).stdout.includes('hop 2 · gateway → upstream'));
      tmux(['send-keys', '-t', session, 'q']);
      await until(() => existsSync(rc) && readFileSync(rc, 'utf8').trim() !== '', 20_000);
      expect(readFileSync(rc, 'utf8').trim()).toBe('130');
      expect(ownFaults(fake)).toEqual(OWN);
      const screen = tmux(['capture-pane', '-p', '-J', '-S', '-200', '-t', session]).stdout;
      expect(screen).toMatch(/^total amplification +[\d.]+×$/m);
    } finally {
      tmux(['kill-session', '-t', session]);
      writeFileSync(rc, '');
    }
  }, 60_000);
});
