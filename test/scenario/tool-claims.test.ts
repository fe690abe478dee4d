import { describe, expect, it } from 'vitest';
import { diffResults } from '../../src/gate/diff-results.js';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { RESULT_SCHEMA, type ResultFile, type RunResult, type ToolResult } from '../../src/run/metrics/result.js';
import { bundledText, runAll, type Runs } from './claims.js';

// The headers of the bundled scenarios with tools say what a user will see; these tests hold
// the scenarios to it, with margins (the headers give seed 1's figures).

const cache = new Map<string, Runs>();
function runs(name: string, set: string[] = []): Runs {
  const key = `${name}\n${set.join('\n')}`;
  let r = cache.get(key);
  if (r === undefined) {
    r = runAll(name, set);
    cache.set(key, r);
  }
  return r;
}

function tool(r: RunResult, name: string): ToolResult {
  const t = r.tools?.find((x) => x.name === name);
  expect(t, `tool ${name}`).toBeDefined();
  return t!;
}

describe('side-effects: a slow email tool that times out after sending, during a brownout', () => {
  it('naive retries and impatient users send hundreds of duplicate emails', () => {
    const { naive } = runs('side-effects').results;
    const send = tool(naive, 'gmail.send');
    expect(send.sideEffect).toBe(true);
    expect(send.duplicates).toBeGreaterThanOrEqual(300);
    expect(send.duplicates).toBeLessThan(1000);
    expect(send.executions).toBe(send.intents + send.duplicates);
    expect(send.conflicts).toBe(0);
    expect(naive.users?.impatient).toBeGreaterThan(0);
  });

  it('the engine with idempotency keys sends each email once, and counts its conflicts', () => {
    const { naive, engine } = runs('side-effects').results;
    const send = tool(engine, 'gmail.send');
    expect(send.duplicates).toBe(0);
    expect(send.executions).toBe(send.intents);
    expect(send.intents).toBe(tool(naive, 'gmail.send').intents);
    expect(send.conflicts).toBeGreaterThan(100);
    expect(send.replays).toBeGreaterThan(50);
    // Not at the price of the tasks: both finish (nearly) every one.
    expect(engine.successRate).toBeGreaterThan(0.97);
    expect(naive.successRate).toBeGreaterThan(0.97);
  });

  it("with tenants of many users, each intent's key names its task's user and still holds across resubmissions", () => {
    const many = runAll(
      `${bundledText('side-effects')}\ntenants: [{ name: a, users: 20 }, { name: b, weight: 2, users: 3 }]\n`,
    ).results;
    expect(many.naive.tenants?.map((t) => t.name)).toEqual(['a', 'b']);
    const send = tool(many.engine, 'gmail.send');
    expect(send.duplicates).toBe(0);
    expect(send.conflicts).toBeGreaterThan(100);
    expect(tool(many.naive, 'gmail.send').duplicates).toBe(
      tool(runs('side-effects').results.naive, 'gmail.send').duplicates,
    );
  });

  it('the users are a layer of amplification of their own: without resubmissions, fewer duplicates, still hundreds', () => {
    const withUsers = tool(runs('side-effects').results.naive, 'gmail.send').duplicates;
    const { naive } = runs('side-effects', ['users.maxResubmits=0']).results;
    expect(naive.users?.resubmits).toBe(0);
    const without = tool(naive, 'gmail.send').duplicates;
    expect(without).toBeLessThan(withUsers);
    expect(without).toBeGreaterThan(300);
  });
});

describe('gates and diffs on duplicates', () => {
  const resultFile = (variants: RunResult[]): ResultFile => ({
    schema: RESULT_SCHEMA,
    scenario: 'side-effects',
    seed: 1,
    mode: 'sim',
    variants,
    timing: { wallMs: 0, attemptsPerSec: 0 },
  });

  it('the catalog names each tool figure, the sums and the users', () => {
    const { naive, engine } = runs('side-effects').results;
    const catalog = MetricCatalog.ofResult(resultFile([naive, engine]));
    const dup = catalog.resolve('tools.gmail.send.duplicates');
    expect([dup.value(naive), dup.value(engine)]).toEqual([477, 0]);
    expect(catalog.resolve('duplicates').value(naive)).toBe(477);
    expect(catalog.resolve('conflicts').value(engine)).toBe(tool(engine, 'gmail.send').conflicts);
    expect(catalog.resolve('tools.gmail.send.429 share').name).toBe('tools.gmail.send.share.429');
    expect(catalog.resolve('users.resubmits').value(naive)).toBe(naive.users?.resubmits);
    expect(() => catalog.resolve('tools.gmail.sned.duplicates')).toThrow(/did you mean tools\.gmail\.send\.duplicates/);
  });

  it('a diff from the engine to naive fails on the duplicates', () => {
    const { naive, engine } = runs('side-effects').results;
    const checks = diffResults(resultFile([engine]), resultFile([{ ...naive, name: 'engine' }]));
    const dup = checks.find((c) => c.name === 'tools.gmail.send.duplicates');
    expect(dup?.status).toBe('fail');
    expect(dup?.actual).toContain('477');
    const same = diffResults(resultFile([engine]), resultFile([engine]));
    expect(same.find((c) => c.name === 'tools.gmail.send.duplicates')?.status).toBe('pass');
  });
});

describe('tenant-flood: three layers of limits, each with its own refusal', () => {
  const tenant = (r: RunResult, name: string) => {
    const t = r.tenants?.find((x) => x.name === name);
    expect(t, `tenant ${name}`).toBeDefined();
    return t!;
  };

  it('entry: the flooding tenant is refused with hints, the others never', () => {
    for (const r of Object.values(runs('tenant-flood').results)) {
      expect(tenant(r, 'flood').refused).toBeGreaterThan(1000);
      expect(tenant(r, 'acme').refused).toBe(0);
      expect(tenant(r, 'globex').refused).toBe(0);
      // The entry bucket holds the flood near its 6/s.
      expect(tenant(r, 'flood').goodput).toBeLessThan(7);
    }
  });

  it('inference: attempts queue with an estimated wait, and fall back to the small model past the max wait', () => {
    for (const r of Object.values(runs('tenant-flood').results)) {
      expect(r.inference?.queued).toBeGreaterThan(0);
      expect(r.inference?.estimatedWaitMs.mean).toBeGreaterThan(0);
      expect(r.inference?.fallbacks).toBeGreaterThan(0);
      expect(r.inference?.fallbacks).toBe(r.inference?.gaveUp);
      expect(r.roots.degraded).toBeGreaterThan(0);
    }
  });

  it('tool: with the engine a failing tool degrades to drafts and the other tenants keep their goodput', () => {
    const { naive, engine } = runs('tenant-flood').results;
    const e = tool(engine, 'tickets.create');
    expect(e.shed.breaker).toBeGreaterThan(0);
    expect(e.degraded).toBeGreaterThan(100);
    expect(e.failed).toBeLessThan(tool(naive, 'tickets.create').failed / 10);
    for (const name of ['acme', 'globex']) {
      expect(tenant(engine, name).successRate).toBeGreaterThan(0.99);
      expect(tenant(naive, name).successRate).toBeLessThan(0.95);
    }
  });
});
