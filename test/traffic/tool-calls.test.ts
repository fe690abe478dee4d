import { describe, expect, it } from 'vitest';
import type { RunResult, ToolResult } from '../../src/run/metrics/result.js';
import { runAll } from '../scenario/claims.js';

/**
 * `roots` root tasks, an orchestrator over an agent that asks the model and then sends one
 * email; `a` attempts at every layer (the tool call inherits the agent's policy), so the tool
 * call is the third layer. The tool always does its effect and loses the answer: every
 * attempt executes, none is seen to succeed.
 */
function alwaysLost(a: number, extra = ''): string {
  return `
name: lost
duration: 2s
drain: 600s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 10, completion: 10 }
layers:
  - { name: orchestrator, retry: { policy: naive, attempts: ${a} } }
  - name: agent
    retry: { policy: naive, attempts: ${a} }
    tools: [{ kind: tool, tool: gmail.send, sideEffect: true, timeout: 1s${extra} }]
  - { name: llm }
tools:
  gmail.send: { latency: 100ms, faults: [{ kind: lost }] }
upstream:
  models: [{ name: m, slots: 64, queue: 64, ttft: 10ms, tpot: 1ms }]
variants: { only: {} }
`;
}

function tool(r: RunResult, name = 'gmail.send'): ToolResult {
  const t = r.tools?.find((x) => x.name === name);
  expect(t, `tool ${name}`).toBeDefined();
  return t!;
}

describe('duplicates in closed form', () => {
  for (const a of [1, 2, 3]) {
    it(`a tool that always loses its answer, ${a} naive attempts at each of 3 layers: ${a}^3 − 1 duplicates per intent`, () => {
      const r = runAll(alwaysLost(a)).results.only;
      const t = tool(r);
      expect(r.roots.offered).toBe(10);
      expect(t.intents).toBe(10);
      expect(t.executions).toBe(10 * a ** 3);
      expect(t.duplicates).toBe(10 * (a ** 3 - 1));
      expect(t.attempts).toBe(10 * a ** 3);
      expect(t.logicalCalls).toBe(10);
      expect(t.failed).toBe(10 * a ** 2);
      expect(r.roots.failed).toBe(10);
    });
  }

  it('with an idempotency key the effect is done once per intent and the retry gets the receipt', () => {
    const r = runAll(alwaysLost(3, ', idempotency: true')).results.only;
    const t = tool(r);
    expect(t.executions).toBe(10);
    expect(t.duplicates).toBe(0);
    expect(t.replays).toBe(10);
    expect(t.ok).toBe(10);
    expect(r.roots.ok).toBe(10);
  });

  it('attempts that overlap a slow effect hit the key in progress: idempotency conflicts, still no duplicate', () => {
    const slow = alwaysLost(3, ', idempotency: true')
      .replace('faults: [{ kind: lost }]', 'faults: []')
      .replace('latency: 100ms', 'latency: 2500ms');
    const r = runAll(slow).results.only;
    const t = tool(r);
    expect(t.duplicates).toBe(0);
    expect(t.executions).toBe(10);
    expect(t.conflicts).toBeGreaterThanOrEqual(10);
    expect(t.share['409']).toBeGreaterThan(0);
    // Without the key the same overlap does the effect again on every attempt.
    const naive = tool(runAll(slow.replace(', idempotency: true', '')).results.only);
    expect(naive.duplicates).toBeGreaterThan(0);
    expect(naive.conflicts).toBe(0);
  });

  it('a tool without side effects counts executions but no intents or duplicates', () => {
    const r = runAll(alwaysLost(2).replace('sideEffect: true', 'sideEffect: false')).results.only;
    const t = tool(r);
    expect(t.sideEffect).toBe(false);
    expect(t.executions).toBe(80);
    expect(t.duplicates).toBe(0);
  });
});

describe('impatient users', () => {
  it('resubmissions are the same intent: their effects are duplicates, and the users are a layer of amplification', () => {
    const text = alwaysLost(1)
      .replace('faults: [{ kind: lost }]', 'faults: []')
      .replace('latency: 100ms', 'latency: 3s')
      .replace('timeout: 1s', 'timeout: 10s')
      .replace('variants:', 'users: { patience: 1s, maxResubmits: 2 }\nvariants:');
    const r = runAll(text).results.only;
    expect(r.users).toEqual({
      tasks: 10,
      submissions: 30,
      resubmits: 20,
      impatient: 20,
      afterError: 0,
      amplification: 3,
    });
    const t = tool(r);
    expect(t.executions).toBe(30);
    expect(t.duplicates).toBe(20);
    expect(r.roots.ok).toBe(10);
  });

  it('users resubmit after an error with the configured probability', () => {
    const text = alwaysLost(1).replace(
      'variants:',
      'users: { onError: 1, errorDelay: 1s, maxResubmits: 2 }\nvariants:',
    );
    const r = runAll(text).results.only;
    expect(r.users?.afterError).toBe(20);
    expect(tool(r).duplicates).toBe(20);
    expect(r.roots.failed).toBe(10);
  });
});

describe('determinism and untouched scenarios', () => {
  it('same seed, same result to the byte', () => {
    const text = alwaysLost(2).replace('variants:', 'users: { patience: 1500ms, onError: 0.5 }\nvariants:');
    expect(JSON.stringify(runAll(text).results)).toBe(JSON.stringify(runAll(text).results));
  });

  it('a scenario without tools or users has no tools or users section', () => {
    const r = runAll(alwaysLost(1).replace(/ {4}tools: \[.*\]\n/, '')).results.only;
    expect(r.tools).toEqual(expect.any(Array));
    const bare = runAll(
      alwaysLost(1)
        .replace(/ {4}tools: \[.*\]\n/, '')
        .replace(/tools:\n {2}gmail.send: .*\n/, ''),
    ).results.only;
    expect(bare.tools).toBeUndefined();
    expect(bare.users).toBeUndefined();
  });
});

describe('the entry limit refuses with a retry-after hint the users honour, or not', () => {
  const flood = (honour: boolean): RunResult =>
    runAll(
      alwaysLost(1)
        .replace('faults: [{ kind: lost }]', 'faults: []')
        .replace(
          'variants:',
          `tenants: [{ name: t }]\nentry: { rps: 2, burst: 1 }\nusers: { maxResubmits: 20, honourRetryAfter: ${honour}, errorDelay: 50ms }\nvariants:`,
        ),
    ).results.only;

  it('users that wait the hint come back when there is room: every task done, few refusals', () => {
    const r = flood(true);
    expect(r.tenants?.[0].offered).toBe(10);
    expect(r.roots.ok).toBe(10);
    expect(r.tenants?.[0].refused).toBeGreaterThan(0);
    expect(r.tenants?.[0].refused).toBe(r.users?.afterError);
  });

  it('users that ignore it come back too early and are refused more often', () => {
    expect(flood(false).tenants?.[0].refused).toBeGreaterThan(flood(true).tenants?.[0].refused ?? Infinity);
  });

  it('per user, a tenant of many users is refused less than per tenant; of one user, the same', () => {
    const refused = (tenant: string, per: string): RunResult =>
      runAll(
        alwaysLost(1)
          .replace('faults: [{ kind: lost }]', 'faults: []')
          .replace('variants:', `tenants: [${tenant}]\nentry: { rps: 2, burst: 1, per: ${per} }\nvariants:`),
      ).results.only;
    const many = {
      tenant: refused('{ name: t, users: 50 }', 'tenant'),
      user: refused('{ name: t, users: 50 }', 'user'),
    };
    expect(many.tenant.tenants?.[0].refused).toBeGreaterThan(0);
    expect(many.user.tenants?.[0].refused).toBeLessThan(many.tenant.tenants?.[0].refused ?? 0);
    expect(many.user.tenants).toHaveLength(1); // refusals stay counted per tenant
    expect(many.user.roots.failed).toBe(many.user.tenants?.[0].refused);
    const one = refused('{ name: t }', 'user');
    expect(one.tenants?.[0].refused).toBe(refused('{ name: t }', 'tenant').tenants?.[0].refused);
    expect(one.tenants?.[0].refused).toBe(many.tenant.tenants?.[0].refused);
  });

  it('without users a refusal fails the task at once', () => {
    const r = runAll(
      alwaysLost(1)
        .replace('faults: [{ kind: lost }]', 'faults: []')
        .replace('variants:', 'entry: { rps: 2, burst: 1 }\nvariants:'),
    ).results.only;
    expect(r.tenants?.[0]).toMatchObject({ name: 'default', offered: 10 });
    expect(r.roots.failed).toBe(r.tenants?.[0].refused);
    expect(r.roots.failed).toBeGreaterThan(0);
  });
});
