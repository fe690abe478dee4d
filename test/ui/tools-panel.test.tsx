import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { resolveVariant } from '../../src/scenario/variants.js';
import { ToolsPanel, toolsLines } from '../../src/ui/ToolsPanel.js';
import { linesOf, naiveView } from './fixture.js';

afterEach(() => cleanup());

/** A variant of a bundled scenario run to the end, as the dashboard sees it. */
function viewOf(name: string, variant: string) {
  const s = resolveVariant(loadScenario(name), variant);
  const sim = new Simulation({
    name: variant,
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  });
  sim.run();
  return sim.view();
}

describe('ToolsPanel', () => {
  it('shows executions, duplicates and conflicts per tool, duplicates in red', () => {
    const naive = viewOf('side-effects', 'naive');
    const frame = linesOf(render(<ToolsPanel view={naive} width={80} color={false} />).lastFrame()).join('\n');
    expect(frame).toContain('tools · users 599 submissions');
    expect(frame).toContain('gmail.send  exec 1,050  dup 477  conflicts 0  degraded 0.0 %');
    expect(toolsLines(naive, 80)[1]).toContainEqual({ text: '477', tone: 'bad' });
  });

  it('shows the engine: no duplicate, its conflicts, and the breaker of each tool', () => {
    const engine = viewOf('side-effects', 'engine');
    const frame = linesOf(render(<ToolsPanel view={engine} width={80} color={false} />).lastFrame()).join('\n');
    expect(frame).toMatch(/gmail\.send {2}exec 573 {2}dup 0 {2}conflicts 329 {2}degraded 0\.0 % {2}closed/);
  });

  it('shows the breaker open and the degraded share when a failing tool degrades', () => {
    const s = resolveVariant(loadScenario('tenant-flood'), 'engine');
    const sim = new Simulation({
      name: 'engine',
      seed: s.seed,
      durationMs: s.durationMs,
      drainMs: s.drainMs,
      traffic: s.traffic,
      upstream: s.upstream,
    });
    const seen = new Set<string>();
    let line = '';
    for (let t = 20_000; t <= 40_000; t += 500) {
      sim.advanceTo(t);
      line = toolsLines(sim.view(), 80)[1]
        .map((x) => x.text)
        .join('');
      seen.add(line.split('  ').at(-1)!);
    }
    expect(seen).toContain('open');
    expect(line).toMatch(/^tickets\.create .* degraded [1-9]\d*\.\d % {2}(open|half_open|closed)$/);
  });

  it('is empty without tools', () => {
    expect(toolsLines(naiveView(), 80)).toEqual([]);
  });
});
