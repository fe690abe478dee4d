import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import YAML from 'yaml';
import { tempDir } from './cli/capture-io.js';
import { elements, parseXml } from './report/strict-xml.js';

/**
 * examples/github-actions/stormlab-gate.yml, checked as a team would use it: its steps are the
 * ones the README promises, and each of its `npx stormlab …` commands, run against the built
 * CLI in a fresh directory, passes as written and turns the build red on a regression.
 */
const WORKFLOW = fileURLToPath(new URL('../examples/github-actions/stormlab-gate.yml', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/stormlab.js', import.meta.url));
/** Keeps each simulated run short; the figures gated on are there within 10 s of traffic. */
const SHORT = ['--duration', '10s'];
/** The engine variant turned naive: 3 retries at each of 3 layers, 27× the load. */
const NAIVE_ENGINE = ['--set', 'variants.engine={"layers[*].retry": {policy: naive, attempts: 3}}'];

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}

const text = readFileSync(WORKFLOW, 'utf8');
const doc = YAML.parse(text) as { on: unknown; jobs: Record<string, { 'runs-on': string; steps: Step[] }> };
const steps = Object.values(doc.jobs)[0].steps;

/** Words of a shell command line: '…' and "…" quoting, backslash escapes; nothing else of sh. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unbalanced ${c} in ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '\\') word = (word ?? '') + line[++i];
    else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The arguments of every `npx stormlab …` line of the steps' scripts, in order. */
function stormlabCommands(): string[][] {
  return steps
    .flatMap((s) => (s.run ?? '').split('\n'))
    .map((l) => l.trim())
    .filter((l) => l.startsWith('npx stormlab '))
    .map((l) => shellWords(l).slice(2));
}

function stormlab(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', CI: 'true' },
    timeout: 60_000,
  });
  if (r.error !== undefined) throw r.error;
  return r;
}

/** A workflow command as the test runs it: simulated runs shortened, `extra` flags appended to them. */
function shortened(args: string[], extra: string[] = []): string[] {
  return args[0] === 'compare' || args[0] === 'run' ? [...args, ...SHORT, ...extra] : args;
}

/** The refresh command the workflow's comment gives, as arguments. */
function refreshCommand(): string[] {
  const line = text
    .split('\n')
    .map((l) => l.replace(/^\s*#\s*/, ''))
    .find((l) => l.startsWith('npx stormlab compare') && l.includes('stormlab/baseline.json'));
  expect(line, 'a comment saying how to refresh the baseline').toBeDefined();
  return shellWords(line!).slice(2);
}

/** A fresh checkout: the baseline made by the refresh command, as a team would commit it. */
function checkout(): string {
  const dir = tempDir();
  mkdirSync(join(dir, 'stormlab'));
  const r = stormlab(shortened(refreshCommand()), dir);
  expect(r.status, r.stderr).toBe(0);
  expect(existsSync(join(dir, 'stormlab', 'baseline.json'))).toBe(true);
  return dir;
}

describe('examples/github-actions/stormlab-gate.yml: the workflow', () => {
  it('checks out, sets up Node 20, installs with npm ci, on pull requests and pushes', () => {
    expect(Object.keys(doc.on as object)).toEqual(expect.arrayContaining(['pull_request', 'push']));
    expect(steps[0].uses).toMatch(/^actions\/checkout@v\d+$/);
    expect(steps[1].uses).toMatch(/^actions\/setup-node@v\d+$/);
    expect(steps[1].with?.['node-version']).toBe(20);
    expect(steps[2].run).toBe('npm ci');
  });

  it('gates with the compare command, then diffs against the baseline kept in the repo', () => {
    const commands = stormlabCommands();
    expect(commands).toHaveLength(3);
    expect(commands[0]).toEqual([
      'compare',
      'retry-storm',
      '--no-ui',
      '--expect',
      'variants.engine.amplification < 1.5',
      '--junit',
      'stormlab-junit.xml',
      '--markdown',
      'stormlab-summary.md',
      '--json',
      'stormlab-result.json',
    ]);
    expect(commands[1].slice(0, 5)).toEqual([
      'diff',
      'stormlab/baseline.json',
      'stormlab-result.json',
      '--tolerance',
      '5%',
    ]);
    expect(commands[2]).toEqual(['report', 'stormlab-result.json', '--html', 'stormlab-report.html']);
  });

  it('appends the summaries to $GITHUB_STEP_SUMMARY and uploads the reports even when the gate failed', () => {
    const summary = steps.find((s) => s.run?.includes('$GITHUB_STEP_SUMMARY'));
    expect(summary?.if).toBe('always()');
    expect(summary!.run).toContain('stormlab-summary.md');
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'));
    expect(upload?.if).toBe('always()');
    expect(String(upload!.with?.path).split('\n')).toEqual(
      expect.arrayContaining(['stormlab-junit.xml', 'stormlab-result.json', 'stormlab-report.html']),
    );
    const diff = steps.find((s) => s.run?.startsWith('npx stormlab diff'));
    expect(diff?.if).toContain("hashFiles('stormlab-result.json')");
  });
});

describe('examples/github-actions/stormlab-gate.yml: its commands against the built CLI', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('as written: every command exits 0, and the reports and the job summary are written', () => {
    const dir = checkout();
    for (const args of stormlabCommands()) {
      const r = stormlab(shortened(args), dir);
      expect(r.status, `stormlab ${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
    }
    const junit = parseXml(readFileSync(join(dir, 'stormlab-junit.xml'), 'utf8'));
    // The --expect, besides the scenario's own expect: list.
    expect(elements(junit, 'testcase').map((t) => t.attrs.name)).toContain('variants.engine.amplification < 1.5');
    expect(junit.attrs.failures).toBe('0');
    expect(JSON.parse(readFileSync(join(dir, 'stormlab-result.json'), 'utf8')).schema).toBe('stormlab.result/v1');
    expect(readFileSync(join(dir, 'stormlab-report.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    // The summary step, run as Actions runs it (bash -e), into a stand-in for the step summary.
    const summaryFile = join(dir, 'step-summary.md');
    const script = steps.find((s) => s.run?.includes('$GITHUB_STEP_SUMMARY'))!.run!;
    const sh = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GITHUB_STEP_SUMMARY: summaryFile },
    });
    expect(sh.status, sh.stderr).toBe(0);
    const summary = readFileSync(summaryFile, 'utf8');
    expect(summary).toMatch(/^### stormlab retry-storm: ✅ /);
    expect(summary).toMatch(/^### stormlab diff retry-storm: ✅ all expectations held$/m);
  });

  it('the engine turned naive: the gate exits 1 and the diff against the baseline exits 1 — a red build', () => {
    const dir = checkout();
    const [gate, diff] = stormlabCommands();
    const g = stormlab(shortened(gate, NAIVE_ENGINE), dir);
    expect(g.status, g.stderr).toBe(1);
    expect(g.stdout).toMatch(/^FAILED +engine +variants\.engine\.amplification < 1\.5 +27\.0× /m);
    const junit = parseXml(readFileSync(join(dir, 'stormlab-junit.xml'), 'utf8'));
    const mine = elements(junit, 'testcase').filter((t) => t.attrs.name === 'variants.engine.amplification < 1.5');
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((t) => elements(t, 'failure').length === 1)).toBe(true);
    const d = stormlab(shortened(diff), dir);
    expect(d.status, d.stderr).toBe(1);
    expect(d.stdout).toMatch(/^FAILED +engine +amplification +27\.0× /m);
  });

  it('a baseline from a better run: the diff alone exits 1', () => {
    const dir = checkout();
    const [gate, diff] = stormlabCommands();
    expect(stormlab(shortened(gate), dir).status).toBe(0);
    // As if the last refresh had recorded an engine twice as quick at the root.
    const path = join(dir, 'stormlab', 'baseline.json');
    const baseline = JSON.parse(readFileSync(path, 'utf8'));
    const engine = baseline.variants.find((v: { name: string }) => v.name === 'engine');
    engine.roots.latencyMs.p99 = Math.round(engine.roots.latencyMs.p99 / 2);
    writeFileSync(path, JSON.stringify(baseline));
    const d = stormlab(shortened(diff), dir);
    expect(d.status, d.stdout + d.stderr).toBe(1);
    expect(d.stdout).toMatch(/^FAILED +engine +roots\.p99 /m);
  });
});
