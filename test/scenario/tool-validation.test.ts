import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { BASE, edit, problemsOf } from './helpers.js';

/** BASE with a tool service and an agent that sends an email after its model calls. */
const TOOLS = edit(
  '  - { name: agent, fanout: 2, retry: { policy: naive } }',
  '  - name: agent\n    fanout: 2\n    retry: { policy: naive }\n    tools: [{ kind: tool, tool: gmail.send, sideEffect: true, timeout: 2s }]',
  `${BASE}tools:\n  gmail.send: { slots: 4, latency: 300ms, rps: 20, faults: [{ kind: lost, from: 1s, to: 5s, rate: 0.5 }] }\nusers: { patience: 5s, onError: 0.5 }\n`,
);

describe('tools, tool calls and users: defaults and path-named problems', () => {
  it('accepts and resolves them', () => {
    const s = loadScenario(TOOLS);
    expect(s.traffic.layers[0].tools).toEqual([
      { tool: 'gmail.send', sideEffect: true, calls: 1, timeoutMs: 2000, degrade: 'fail' },
    ]);
    expect(s.upstream.tools).toEqual([
      {
        name: 'gmail.send',
        slots: 4,
        queue: 256,
        latencyMs: 300,
        rps: 20,
        faults: [{ kind: 'lost', fromMs: 1000, toMs: 5000, rate: 0.5 }],
      },
    ]);
    expect(s.traffic.users).toEqual({
      patienceMs: 5000,
      onError: 0.5,
      errorDelayMs: 1000,
      maxResubmits: 2,
      honourRetryAfter: true,
    });
  });

  it('a scenario without them resolves as before', () => {
    const s = loadScenario(BASE);
    expect(s.upstream.tools).toBeUndefined();
    expect(s.traffic.users).toBeUndefined();
    expect(s.traffic.layers[0].tools).toBeUndefined();
  });

  it('idempotency: service (the default, left unset) or redis; anything else is named', () => {
    expect(loadScenario(TOOLS).idempotency).toBeUndefined();
    expect(loadScenario(`${TOOLS}idempotency: redis\n`).idempotency).toBe('redis');
    expect(loadScenario(`${TOOLS}idempotency: service\n`).idempotency).toBe('service');
    expect(problemsOf(`${TOOLS}idempotency: memcached\n`)).toEqual([
      'idempotency: expected one of service, redis, got "memcached"',
    ]);
  });

  it('tenants and the entry limit: per tenant and one user each by default; per and users named when wrong', () => {
    const LIMITED = `${TOOLS}tenants: [{ name: acme }, { name: globex, weight: 2, users: 40 }]\nentry: { rps: 5 }\n`;
    const s = loadScenario(LIMITED);
    expect(s.traffic.entry).toEqual({ rps: 5, burst: 5, per: 'tenant' });
    expect(s.traffic.tenants).toEqual([
      { name: 'acme', weight: 1 },
      { name: 'globex', weight: 2, users: 40 },
    ]);
    expect(loadScenario(edit('{ rps: 5 }', '{ rps: 5, per: user }', LIMITED)).traffic.entry?.per).toBe('user');
    expect(problemsOf(edit('{ rps: 5 }', '{ rps: 5, per: everyone }', LIMITED))).toEqual([
      'entry.per: expected one of tenant, user, got "everyone"',
    ]);
    expect(problemsOf(edit('users: 40', 'users: 0.5', LIMITED))).toEqual([
      'tenants[1].users: expected an integer from 1 to 1000000000, got 0.5',
    ]);
    expect(problemsOf(edit('users: 40', 'users: 2e9', LIMITED))).toEqual([
      'tenants[1].users: expected an integer from 1 to 1000000000, got 2000000000',
    ]);
  });

  it('tool call fields', () => {
    expect(problemsOf(edit('sideEffect: true', 'sideEffect: maybe', TOOLS))).toEqual([
      'layers[0].tools[0].sideEffect: expected true or false, got "maybe"',
    ]);
    expect(problemsOf(edit('kind: tool,', 'kind: llm,', TOOLS))).toEqual([
      'layers[0].tools[0].kind: expected kind: tool, got "llm"',
    ]);
    expect(problemsOf(edit('timeout: 2s }', 'timeout: 2s, degrade: shrug }', TOOLS))).toEqual([
      'layers[0].tools[0].degrade: expected one of fail, draft, read-only, defer, got "shrug"',
    ]);
    expect(problemsOf(edit('tool: gmail.send,', 'tool: gmail.sned,', TOOLS))).toEqual([
      'layers[0].tools[0].tool: unknown tool "gmail.sned" (tools: gmail.send)',
    ]);
    expect(problemsOf(edit('timeout: 2s }', 'timeout: 2s, calls: 0 }', TOOLS))).toEqual([
      'layers[0].tools[0].calls: expected a positive integer, got 0',
    ]);
  });

  it('tool calls belong above the last layer', () => {
    const last = edit(
      '  - { name: llm, retry: { policy: sdk } }',
      '  - { name: llm, retry: { policy: sdk }, tools: [{ tool: gmail.send, sideEffect: false }] }',
      TOOLS,
    );
    expect(problemsOf(last)).toEqual([
      'layers[1].tools: the last layer calls the model; give tool calls to a layer above it',
    ]);
  });

  it('tool service fields', () => {
    expect(problemsOf(edit('slots: 4,', 'slots: 0,', TOOLS))).toEqual([
      'tools["gmail.send"].slots: expected a positive integer, got 0',
    ]);
    expect(problemsOf(edit('kind: lost,', 'kind: gone,', TOOLS))[0]).toMatch(
      /^tools\["gmail\.send"\]\.faults\[0\]\.kind: /,
    );
    expect(problemsOf(edit('rate: 0.5 }', 'rate: 2 }', TOOLS))).toEqual([
      'tools["gmail.send"].faults[0].rate: expected a number from 0 to 1, got 2',
    ]);
    expect(problemsOf(edit('to: 5s', 'to: 500ms', TOOLS))).toEqual([
      'tools["gmail.send"].faults[0].to: expected a time after from (1s), got 500ms',
    ]);
  });

  it('users fields', () => {
    expect(problemsOf(edit('onError: 0.5', 'onError: 1.5', TOOLS))).toEqual([
      'users.onError: expected a number from 0 to 1, got 1.5',
    ]);
    expect(problemsOf(edit('patience: 5s', 'patience: soon', TOOLS))[0]).toMatch(/^users\.patience: /);
    expect(loadScenario(edit('patience: 5s', 'patience: never', TOOLS)).traffic.users?.patienceMs).toBe(Infinity);
    expect(problemsOf(edit('onError: 0.5', 'onError: 0.5, maxResubmit: 2', TOOLS))).toEqual([
      'users.maxResubmit: unknown key (did you mean maxResubmits?)',
    ]);
  });
});
