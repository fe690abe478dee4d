import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { EnginePanel, fallbackShare, fillBar } from '../../src/ui/EnginePanel.js';
import { FaultTimeline } from '../../src/ui/FaultTimeline.js';
import { LayersPanel } from '../../src/ui/LayersPanel.js';
import { Sparkline, sparkline } from '../../src/ui/Sparkline.js';
import { SummaryPanel } from '../../src/ui/SummaryPanel.js';
import { UpstreamPanel } from '../../src/ui/UpstreamPanel.js';
import { DURATION, engineView, FAULTS, linesOf, naiveView, T } from './fixture.js';
import { renderAt } from './render-at.js';

afterEach(() => cleanup());

function text(frame: string | undefined): string {
  return linesOf(frame).join('\n');
}

function widest(frame: string | undefined): number {
  return Math.max(...linesOf(frame).map((l) => [...l].length));
}

describe('Sparkline', () => {
  it('scales to the largest value, newest at the right', () => {
    expect(sparkline([0, 1, 2, 4, 8], 5)).toBe(' ▁▂▄█');
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8], 8)).toBe('▁▂▃▄▅▆▇█');
  });

  it('is always exactly `width` wide: pads on the left, keeps the last values', () => {
    expect(sparkline([8], 3)).toBe('  █');
    expect(sparkline([8, 8, 8, 1, 8], 2)).toBe('▁█');
    expect(sparkline([], 4)).toBe('    ');
  });

  it('takes a shared maximum, and shows any traffic as at least ▁', () => {
    expect(sparkline([4], 1, 8)).toBe('▄');
    expect(sparkline([1, 1000], 2)).toBe('▁█');
    expect(sparkline([Number.NaN, 0], 2)).toBe('  ');
  });

  it('renders as one line of blocks', () => {
    const { lastFrame } = render(<Sparkline values={[1, 2, 4, 8]} width={6} color={false} />);
    expect(lastFrame()).toBe('  ▁▂▄█');
  });
});

describe('SummaryPanel', () => {
  it('titles the variant with its health as a word and shows amplification overall and now', () => {
    const out = text(render(<SummaryPanel view={naiveView()} width={60} color={false} />).lastFrame());
    expect(out).toContain('naive · upstream ✗ stormed · tasks ! degraded');
    expect(out).toContain('amplification ✗ 14.2×  now ✗ 27.0×');
    expect(out).toContain('goodput 12.3/s  ok ! 61.7 %  in flight 68');
  });

  it('says degraded for the engine (amplification fine, success under 90 %)', () => {
    const out = text(render(<SummaryPanel view={engineView()} width={60} color={false} />).lastFrame());
    expect(out).toContain('engine · upstream ✓ protected · tasks ! degraded');
    expect(out).toContain('✓ 1.08×');
    const narrow = text(render(<SummaryPanel view={engineView()} width={39} color={false} />).lastFrame());
    expect(narrow).toContain('engine · ✓ upstream · ! tasks');
  });

  it('says the upstream is protected while the tasks fail (a full outage behind the engine)', () => {
    const base = engineView();
    const outage = {
      ...base,
      snapshot: {
        ...base.snapshot,
        amplification: 0.006,
        amplificationLast5s: 0.004,
        successRate: 0,
        roots: { ...base.snapshot.roots, ok: 0, late: 0, failed: 120 },
      },
    };
    const out = text(render(<SummaryPanel view={outage} width={60} color={false} />).lastFrame());
    expect(out).toContain('engine · upstream ✓ protected · tasks ✗ failing');
  });
});

describe('LayersPanel', () => {
  it('shows each layer as a table row when wide', () => {
    const { lastFrame } = renderAt(<LayersPanel view={engineView()} width={120} color={false} />, 120, 10);
    const lines = linesOf(lastFrame());
    expect(lines[0]).toMatch(/^layer\s+calls\s+attempts\s+amp\s+ok\s+p50\s+p95\s+p99\s+shed$/);
    expect(lines[1]).toMatch(
      /^orchestrator\s+648\s+652\s+✓ 1\.01×\s+! 68\.8 %\s+610 ms\s+1\.30 s\s+2\.10 s\s+deadline 4$/,
    );
    expect(lines[3]).toMatch(
      /^llm\s+1,944\s+2,100\s+✓ 1\.08×\s+! 69\.2 %\s+300 ms\s+800 ms\s+1\.40 s\s+throttle 512, budget 12, breaker 388$/,
    );
    expect(lines).toHaveLength(4);
  });

  it('moves what does not fit onto lines under each layer when narrow', () => {
    const { lastFrame } = render(<LayersPanel view={naiveView()} width={39} color={false} />);
    const out = text(lastFrame());
    expect(widest(lastFrame())).toBeLessThanOrEqual(39);
    expect(out).toMatch(/llm\s+1,944\s+27\.6k\s+✗ 14\.2×/);
    expect(out).toContain('ok ! 69.4 %  p50 310 ms  p95 1.10 s');
    expect(out).toContain('p99 1.90 s');
    expect(out).not.toContain('shed');
  });

  it('lists calls shed locally by reason', () => {
    const out = text(render(<LayersPanel view={engineView()} width={60} color={false} />).lastFrame());
    expect(out).toContain('shed throttle 512  budget 12  breaker 388');
    expect(out).toContain('shed budget 31');
  });
});

describe('UpstreamPanel', () => {
  it('draws attempts/s against logical leaf calls/s on one scale, with shares, queue, busy and waste', () => {
    const { lastFrame } = render(<UpstreamPanel view={naiveView()} width={39} color={false} />);
    const lines = linesOf(lastFrame());
    expect(widest(lastFrame())).toBeLessThanOrEqual(39);
    expect(lines[0]).toBe('upstream · 60 s · █ 1.62k/s');
    // 20 s at 64/s then 1,620/s in the outage (the second in progress is left out).
    expect(lines[1]).toMatch(/^attempts ▁+█+ +1\.62k\/s$/);
    expect(lines[2]).toMatch(/^logical {2}▁+ +60\.0\/s$/);
    expect(lines[3]).toBe('429 0.0 %  5xx 95.6 %  timeout 0.0 %');
    expect(lines[4]).toBe('queue 128  busy 64  wasted 1.23M tok');
  });

  it('sums queue and busy slots over models', () => {
    const out = text(render(<UpstreamPanel view={engineView()} width={60} color={false} />).lastFrame());
    expect(out).toContain('queue 0  busy 12  wasted 18.4k tok');
    // 32 whole seconds so far, right-aligned in a 42-column sparkline.
    expect(out).toMatch(/attempts {11}█{20}▄{12} +24\.0\/s/);
  });
});

describe('EnginePanel', () => {
  it('shows budget, drop probability and breaker state with time in state per layer and target', () => {
    const { lastFrame } = render(<EnginePanel view={engineView()} width={39} color={false} />);
    const lines = linesOf(lastFrame());
    expect(widest(lastFrame())).toBeLessThanOrEqual(39);
    expect(lines[0]).toMatch(/^engine\s+budget\s+drop breaker$/);
    expect(lines[1]).toMatch(/^orchestrator\s+136\s+0\.0 % closed 32\.4s$/);
    expect(lines[2]).toMatch(/^agent\s+0\.40\s+8\.0 % closed 32\.4s$/);
    expect(lines[3]).toMatch(/^llm\s+-0\.20$/);
    expect(lines[4]).toMatch(/^ {2}primary\s+62\.0 % open 3\.2s ×2$/);
    expect(lines[5]).toMatch(/^ {2}fallback\s+0\.0 % closed 32\.4s$/);
    expect(lines).toContain('  fallback 22.5 %');
    expect(lines).toContain('  in flight 12, 3 queued');
  });

  it('names a replicated layer with its replicas and says how many are in the breaker state shown', () => {
    const view = engineView();
    const [orchestrator, agent, llm] = view.engines;
    const engines = [
      { ...orchestrator, replicas: { count: 4, state: 'local' as const, breakers: [4] } },
      agent,
      { ...llm, replicas: { count: 4, state: 'shared' as const, breakers: [3, 4] } },
    ];
    const { lastFrame } = render(<EnginePanel view={{ ...view, engines }} width={48} color={false} />);
    const lines = linesOf(lastFrame());
    expect(widest(lastFrame())).toBeLessThanOrEqual(48);
    // All closed: no count, as for one replica.
    expect(lines[1]).toMatch(/^orchestrator ×4\s+136\s+0\.0 % closed 32\.4s$/);
    expect(lines[2]).toMatch(/^agent\s+0\.40\s+8\.0 % closed 32\.4s$/);
    expect(lines[3]).toMatch(/^llm ×4 shared\s+-0\.20$/);
    expect(lines[4]).toMatch(/^ {2}primary\s+62\.0 % open 3\/4 3\.2s ×2$/);
    expect(lines[5]).toMatch(/^ {2}fallback\s+0\.0 % closed 32\.4s$/);
  });

  it('draws each bucket as available/capacity', () => {
    const out = text(render(<EnginePanel view={engineView()} width={60} color={false} />).lastFrame());
    expect(out).toMatch(/requests\/s\s+█+░+ 14\/50/);
    expect(out).toMatch(/tokens\/min primary █░+ 6,100\/90\.0k/);
    expect(fillBar(14, 50, 10)).toBe('███░░░░░░░');
    expect(fillBar(0, 0, 4)).toBe('░░░░');
  });

  it('computes the fallback share from the requests each target saw', () => {
    expect(fallbackShare(engineView().engines[2].guard)).toBeCloseTo(900 / 4000);
    expect(fallbackShare(engineView().engines[0].guard)).toBeUndefined();
  });

  it('says the engine is off for a variant without it', () => {
    expect(render(<EnginePanel view={naiveView()} width={39} color={false} />).lastFrame()).toBe('engine · off');
  });
});

describe('FaultTimeline', () => {
  it('draws the phases over the run, marks now and names the active phase', () => {
    const { lastFrame } = render(
      <FaultTimeline faults={FAULTS} t={T} durationMs={DURATION} width={80} color={false} />,
    );
    const line = linesOf(lastFrame())[0];
    expect(line).toMatch(/^faults ·+▒+·+█+│█+·+ now outage 503 until 50\.0s$/);
    const bar = line.slice('faults '.length, line.indexOf(' now'));
    expect(bar.indexOf('│')).toBe(Math.floor((T / DURATION) * [...bar].length));
    expect(line.length).toBeLessThanOrEqual(80);
  });

  it('puts a time axis under the bar: 0s under its first cell, the end under its last', () => {
    const lines = linesOf(
      render(<FaultTimeline faults={FAULTS} t={T} durationMs={DURATION} width={80} color={false} />).lastFrame(),
    );
    const barEnd = lines[0].indexOf(' now');
    const axis = lines[1];
    expect(axis.indexOf('0s')).toBe('faults '.length);
    expect(axis.trimEnd().endsWith(`${DURATION / 1000}s`)).toBe(true);
    expect(axis.trimEnd().length).toBe(barEnd);
    expect(axis).toMatch(/^ {7}0s +\d+s +\d+s/);
    // Without the axis (the dashboard drops it when the rows are short), just the bar.
    const bare = render(
      <FaultTimeline faults={FAULTS} t={T} durationMs={DURATION} width={80} color={false} axis={false} />,
    ).lastFrame();
    expect(linesOf(bare)).toHaveLength(1);
  });

  it('names the next phase when none is active', () => {
    const out = render(
      <FaultTimeline faults={FAULTS} t={17_000} durationMs={DURATION} width={100} color={false} />,
    ).lastFrame();
    expect(out).toContain('now ✓ no fault · next outage 503 at 20.0s');
  });

  it('describes error mixes, rates and models', () => {
    const faults = [
      { kind: 'errors' as const, fromMs: 0, toMs: 10_000, rate: 0.3, status: { 503: 0.7, 429: 0.3 }, model: 'primary' },
    ];
    const out = render(
      <FaultTimeline faults={faults} t={1_000} durationMs={DURATION} width={100} color={false} />,
    ).lastFrame();
    expect(out).toContain('now errors 30.0 % 429/503 @primary until 10.0s');
    expect(out).toContain('▓');
  });

  it('says when the scenario has none', () => {
    expect(render(<FaultTimeline faults={[]} t={0} durationMs={DURATION} width={80} color={false} />).lastFrame()).toBe(
      'faults none in this scenario',
    );
  });
});
