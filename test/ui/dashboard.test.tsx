import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/ui/Dashboard.js';
import { dashboardLayout } from '../../src/ui/dashboard-layout.js';
import { engineView, frame, linesOf, naiveView, oneVariant, twoVariants } from './fixture.js';
import { renderAt } from './render-at.js';

afterEach(() => cleanup());

/** The frame at `width` × `height`, escapes removed, one string per row. */
function screen(model = twoVariants(), width = 80, height = 24, view = 0): string[] {
  const r = renderAt(
    <Dashboard model={model} color={false} width={width} height={height} view={view} />,
    width,
    height,
  );
  const lines = linesOf(r.lastFrame());
  r.unmount();
  return lines;
}

function expectFits(lines: string[], width: number, height: number): void {
  expect(lines.length).toBeLessThanOrEqual(height);
  for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(width);
}

describe('Dashboard', () => {
  it('shows the header: scenario, mode, seed, virtual time, progress with time left, speed, state', () => {
    const lines = screen();
    expect(lines[0]).toBe('stormlab retry-storm · sim · seed 1 · 10x speed · ▶ running');
    expect(lines[1]).toMatch(/^32\.4s\/60\.0s virtual \[█+░+\] {2}54% · 27\.6s left$/);
  });

  it('puts both variants and their amplification in the headline and side by side in columns', () => {
    const lines = screen();
    expect(lines[2]).toBe('amplification naive ✗ 14.2× (now ✗ 27.0×) · engine ✓ 1.08× (now ✓ 0.42×)');
    // Two verdicts, symbols only where the words do not fit a column.
    expect(lines.find((l) => l.includes('── naive'))).toMatch(
      /^── naive · ✗ upstream · ! tasks ─+ {2}── engine · ✓ upstream · ! tasks ─+$/,
    );
    expect(lines.find((l) => l.startsWith('faults'))).toContain('now outage 503 until 50.0s');
  });

  it("draws every variant's upstream attempts on one scale, so the storm is the tall one", () => {
    const lines = screen(twoVariants(), 160, 40);
    const sparks = lines.filter((l) => l.includes('attempts ')).map((l) => l.split(/attempts +/).slice(1));
    const [naive, engine] = sparks.flat().map((cells) => cells.match(/[▁▂▃▄▅▆▇█]+/)?.[0] ?? '');
    expect(naive).toContain('█');
    expect(engine).not.toContain('█');
    expect(lines.join('\n')).toMatch(/upstream · 60 s · █ (\S+) shared.*upstream · 60 s · █ \1 shared/);
  });

  it('fits 80×24 with compare by splitting the panels into views', () => {
    const overview = screen(twoVariants(), 80, 24, 0);
    const layers = screen(twoVariants(), 80, 24, 1);
    expectFits(overview, 80, 24);
    expectFits(layers, 80, 24);
    expect(overview.join('\n')).toMatch(/upstream · 60 s · █ \S+ shared\s+upstream · 60 s · █ \S+ shared/);
    expect(overview.join('\n')).toMatch(/engine · off\s+engine\s+budget\s+drop breaker/);
    expect(overview.join('\n')).toContain('open 3.2s');
    expect(overview.at(-1)).toBe('view 1/2 overview · tab next view · space pause · q quit');
    expect(layers.join('\n')).toMatch(/layer\s+calls attempts\s+amp\s+layer\s+calls attempts\s+amp/);
    expect(layers.at(-1)).toBe('view 2/2 layers · tab next view · space pause · q quit');
    // tab wraps around
    expect(screen(twoVariants(), 80, 24, 2)).toEqual(overview);
  });

  it('uses a wide terminal for everything at once, variants side by side', () => {
    const lines = screen(twoVariants(), 160, 40);
    expectFits(lines, 160, 40);
    const text = lines.join('\n');
    for (const word of [
      'upstream · 60 s',
      'upstream ✗ stormed',
      'tasks ! degraded',
      'budget',
      'open 3.2s ×2',
      'closed 32.4s',
      'p99',
      'shed throttle 512',
    ])
      expect(text).toContain(word);
    expect(lines.some((l) => /── naive .*── engine/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('space pause · q quit');
    expect(dashboardLayout(twoVariants(), 160, 35).views).toHaveLength(1);
  });

  it('fits 80×24 with one variant, upstream and engine side by side', () => {
    const lines = screen(oneVariant(), 80, 24);
    expectFits(lines, 80, 24);
    expect(lines[2]).toBe('amplification ✓ 1.08× overall · now ✓ 0.42× (last 5 s) · goodput 12.9/s');
    expect(lines.some((l) => /^upstream · 60 s · █ \S+\s+engine\s+budget/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('layer'))).toBe(true);
  });

  it('pages the variants when they do not fit side by side', () => {
    const three = frame([naiveView(), engineView(), { ...engineView(), name: 'engine-k3' }]);
    const first = screen(three, 80, 24, 0);
    const second = screen(three, 80, 24, 1);
    expectFits(first, 80, 24);
    expectFits(second, 80, 24);
    expect(first[2]).toBe('amplification naive ✗ 14.2× · engine ✓ 1.08× · engine-k3 ✓ 1.08×');
    expect(first.at(-1)).toMatch(/^view 1\/4 overview · naive, engine · tab next view/);
    expect(second.some((l) => l.startsWith('── engine-k3'))).toBe(true);
    // Wide enough: three columns, one screen.
    expect(screen(three, 130, 40).some((l) => /── naive .*── engine .*── engine-k3/.test(l))).toBe(true);
  });

  it('stays inside tiny terminals (clipped, never wrapped)', () => {
    expectFits(screen(twoVariants(), 50, 12), 50, 12);
    expectFits(screen(twoVariants(), 60, 20, 3), 60, 20);
  });

  it('says paused, draining and done in words', () => {
    expect(screen(twoVariants({ paused: true }))[0]).toContain('‖ paused');
    expect(screen(twoVariants({ paused: true })).at(-1)).toContain('space resume');
    expect(screen(twoVariants({ t: 70_000 }))[0]).toContain('▶ draining');
    // The clock stops at the duration; the drain is counted on its own.
    const draining = screen(twoVariants({ t: 70_000 })).find((l) => l.includes('virtual'));
    expect(draining).toMatch(/60\.0s\/60\.0s virtual .* 100% · draining \+10\.0s/);
    const done = frame(
      [
        { ...naiveView(), done: true },
        { ...engineView(), done: true },
      ],
      { t: 75_000 },
    );
    const lines = screen(done);
    expect(lines[0]).toContain('■ done');
    expect(lines.at(-1)).toMatch(/q quit$/);
    expect(lines.at(-1)).not.toContain('space');
  });

  it('shows live runs in real time and max speed as max', () => {
    expect(screen(twoVariants({ mode: 'live' }))[0]).toContain('· live · seed 1 · real time ·');
    expect(screen(twoVariants({ mode: 'live' }))[1]).toMatch(/^32\.4s\/60\.0s real /);
    expect(screen(twoVariants({ speed: Infinity }))[0]).toContain('max speed');
  });

  it('with color false has no escape codes at all, and states still read as words', () => {
    const { lastFrame } = render(<Dashboard model={twoVariants()} color={false} width={80} height={24} />);
    const out = lastFrame() ?? '';
    expect(out).not.toMatch(/\u001b/);
    for (const word of ['open 3.2s', 'closed 32.4s', '✗ upstream', '! tasks', '▶ running']) expect(out).toContain(word);
  });

  it('takes its size from stdout when not given one (rows − 1)', () => {
    const { lastFrame } = render(<Dashboard model={twoVariants()} color={false} />);
    // ink-testing-library's stdout: 100 columns, no rows → 23.
    expectFits(linesOf(lastFrame()), 100, 23);
    expect(linesOf(lastFrame())[2]).toContain('naive ✗ 14.2×');
  });
});
