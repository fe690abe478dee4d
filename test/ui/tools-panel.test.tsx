import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { shownFaults } from '../../src/run/run-view.js';
import { faultLines } from '../../src/ui/FaultTimeline.js';
import { duplicatesLines } from '../../src/ui/Header.js';
import { ToolsPanel, toolsLines } from '../../src/ui/ToolsPanel.js';
import { linesOf, naiveView } from './fixture.js';

afterEach(() => cleanup());

/** A variant of a bundled scenario run to the end, as the dashboard sees it. */
function viewOf(name: string, variant: string) {
  const s = loadScenario(name, { variant });
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
    expect(frame).toMatch(/gmail\.send {2}exec 573 {2}dup 0 {2}conflicts 326 {2}degraded 0\.0 % {2}breaker closed/);
  });

  it('shows the breaker open and the degraded share when a failing tool degrades', () => {
    const s = loadScenario('tenant-flood', { variant: 'engine' });
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
    expect(seen).toContain('breaker open');
    expect(line).toMatch(/^tickets\.create .* degraded [1-9]\d*\.\d % {2}breaker (open|half_open|closed)$/);
  });

  it('wraps a tool onto more lines in a narrow column, the breaker kept', () => {
    const engine = viewOf('side-effects', 'engine');
    const text = toolsLines(engine, 48).map((l) => l.map((x) => x.text).join(''));
    expect(text.slice(1, 3)).toEqual([
      'gmail.send  exec 573  dup 0  conflicts 326',
      '  degraded 0.0 %  breaker closed',
    ]);
    expect(text.every((l) => l.length <= 48)).toBe(true);
  });

  it('shows root tasks degraded, the entry limit per tenant and the inference queue', () => {
    const engine = viewOf('tenant-flood', 'engine');
    const r = engine.snapshot;
    const refused = r.tenants!.reduce((n, t) => n + t.refused, 0);
    expect(refused).toBeGreaterThan(0);
    const text = toolsLines(engine, 100)
      .map((l) => l.map((x) => x.text).join(''))
      .join('\n');
    expect(text).toContain(`roots  degraded ${r.roots.degraded!.toLocaleString('en-US')} (`);
    expect(text).toMatch(new RegExp(`^entry {2}refused ${refused.toLocaleString('en-US')} {2}flood \\d`, 'm'));
    expect(text).toMatch(/^inference {2}queued [\d,]+ {2}est\. wait [\d.]+ (ms|s) \(max [\d.]+ (ms|s)\) {2}gave up/m);
  });

  it('shows partial roots where stage budgets make them', () => {
    const staged = viewOf('deadline-budget', 'stages');
    expect(staged.snapshot.roots.partial).toBeGreaterThan(0);
    const text = toolsLines(staged, 100).map((l) => l.map((x) => x.text).join(''));
    expect(text).toContain(
      `roots  partial ${staged.snapshot.roots.partial} (${((100 * staged.snapshot.roots.partial!) / (staged.snapshot.roots.ok + staged.snapshot.roots.late + staged.snapshot.roots.failed + staged.snapshot.roots.partial!)).toFixed(1)} %)`,
    );
  });

  it('is empty without tools', () => {
    expect(toolsLines(naiveView(), 80)).toEqual([]);
  });
});

describe('the duplicates headline and tool faults in the header', () => {
  const text = (lines: ReturnType<typeof duplicatesLines>) => lines.map((l) => l.map((x) => x.text).join(''));

  it('puts duplicates naive vs engine side by side, red at any and green at none', () => {
    const views = [viewOf('side-effects', 'naive'), viewOf('side-effects', 'engine')];
    const lines = duplicatesLines(views, 100);
    expect(text(lines)).toEqual(['duplicates naive ✗ 477 · engine ✓ 0 (side effects done twice)']);
    expect(lines[0]).toContainEqual({ text: '✗ 477', tone: 'bad' });
    expect(lines[0]).toContainEqual({ text: '✓ 0', tone: 'good' });
    expect(text(duplicatesLines(views, 30))).toEqual(['duplicates', '  naive ✗ 477', '  engine ✓ 0']);
  });

  it('is absent without side-effect tools', () => {
    expect(duplicatesLines([naiveView()], 100)).toEqual([]);
  });

  it("draws the tool service's fault phases on the fault bar, named by tool", () => {
    const s = loadScenario('side-effects');
    const faults = shownFaults(s.upstream);
    expect(faults.map((f) => `${f.kind}@${f.model}`)).toEqual(['latency@gmail.send', 'lost@gmail.send']);
    const bar = faultLines(faults, 30_000, s.durationMs, 120, false)[0]
      .map((x) => x.text)
      .join('');
    expect(bar).toContain('now latency ×8 @gmail.send + lost 20.0 % @gmail.send until 40.0s');
  });
});
