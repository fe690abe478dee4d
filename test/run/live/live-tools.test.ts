import { afterEach, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { createFakeUpstream } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import type { RunResult, ToolResult } from '../../../src/run/metrics/result.js';
import { runSpecOf } from '../../../src/run/run-spec.js';
import { loadScenario } from '../../../src/scenario/load-scenario.js';
import type { ToolServiceStats } from '../../../src/upstream/tool-service.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/**
 * Five root tasks; an agent asks the model, then sends one email; 2 naive attempts at the
 * agent and at its tool call. The tool does its effect and loses the answer, always: each
 * attempt executes, none is seen to succeed — 2 × 2 executions per intent.
 */
const ALWAYS_LOST = (extra = '') => `
name: lost-live
duration: 1s
drain: 30s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 10, completion: 10 }
layers:
  - name: agent
    retry: { policy: naive, attempts: 2 }
    tools: [{ kind: tool, tool: gmail.send, sideEffect: true, timeout: 150ms${extra} }]
  - { name: llm }
tools:
  gmail.send: { latency: 10ms, faults: [{ kind: lost }] }
upstream:
  models: [{ name: m, slots: 64, queue: 64, ttft: 5ms, tpot: 0ms }]
variants: { only: {} }
`;

/** Runs `text` live against a fake upstream on port 0 serving its tools; the result and the server's tool counters. */
async function live(text: string): Promise<{ result: RunResult; served: ToolServiceStats }> {
  const s = loadScenario(text, { variant: 'only' });
  const fake = await createFakeUpstream({
    upstream: s.upstream,
    port: 0,
    random: new SeededRandom(s.seed).split('upstream'),
  });
  open.push(fake);
  const run = new LiveRun(runSpecOf(s, 'only'), { connections: 16 });
  open.push(run);
  await run.start({ url: fake.url, stats: () => fake.stats(), toolStats: () => fake.toolStats() });
  return { result: run.result(), served: fake.toolStats()[0] };
}

function tool(r: RunResult): ToolResult {
  const t = r.tools?.find((x) => x.name === 'gmail.send');
  expect(t, 'tool gmail.send in the result').toBeDefined();
  return t!;
}

describe('LiveRun with tools: the fake upstream serves them and counts the duplicates', () => {
  it('naive: every attempt over HTTP does the effect again, a^L − 1 = 3 duplicates per intent, counted by the server', async () => {
    const { result, served } = await live(ALWAYS_LOST());
    expect(result.roots.offered).toBe(5);
    expect(served).toMatchObject({ requests: 20, executions: 20, intents: 5, duplicates: 15, replays: 0 });
    expect(served.status).toEqual({ lost: 20 });
    const t = tool(result);
    expect(t).toMatchObject({ attempts: 20, executions: 20, duplicates: 15, logicalCalls: 5 });
    expect(t.share.timeout).toBe(1);
    expect(result.roots.failed).toBe(5);
  });

  it('with an idempotency key in the header: the effect once per intent, the retry gets the receipt', async () => {
    const { result, served } = await live(ALWAYS_LOST(', idempotency: true'));
    expect(served).toMatchObject({ executions: 5, intents: 5, duplicates: 0, replays: 5 });
    expect(tool(result)).toMatchObject({ executions: 5, duplicates: 0, replays: 5, ok: 5 });
    expect(result.roots.ok).toBe(5);
  });
});
