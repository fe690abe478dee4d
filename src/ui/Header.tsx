import type { DashboardModel, RunView } from '../run/run-view.js';
import { formatCount, formatRate } from '../report/format.js';
import { drainingFor, formatSeconds } from '../report/progress-line.js';
import { joined, lineWidth, seg, type Line } from './line.js';
import { Lines } from './Lines.js';
import { amplificationCell, hopCell } from './SummaryPanel.js';

/** `10x`, `0.5x`, `max` (as fast as it goes). */
export function formatSpeed(speed: number): string {
  return Number.isFinite(speed) ? `${Number(speed.toPrecision(3))}x` : 'max';
}

/**
 * Where the run is: done, paused, settling (a gateway's upstream: the driver has stopped, hop 2
 * is read once it is quiet), draining (past its duration, finishing in-flight work) or running.
 */
function state(model: DashboardModel): Line {
  if (model.variants.length > 0 && model.variants.every((v) => v.done)) return [seg('■ done', 'good')];
  if (model.paused) return [seg('‖ paused', 'warn')];
  if (model.variants.some((v) => v.hops?.settling !== undefined && !v.done)) return [seg('▶ settling hop 2', 'warn')];
  if (model.t > model.durationMs) return [seg('▶ draining', 'accent')];
  return [seg('▶ running', 'accent')];
}

function statusLine(model: DashboardModel): Line {
  const pace = model.mode === 'sim' ? `${formatSpeed(model.speed)} speed` : 'real time';
  return [
    seg('stormlab ', 'bold'),
    seg(model.scenario, 'bold'),
    seg(` · ${model.mode} · seed ${model.seed} · ${pace} · `, 'dim'),
    ...state(model),
  ];
}

function progressBarLine(model: DashboardModel, width: number): Line {
  const share = model.durationMs > 0 ? Math.min(1, Math.max(0, model.t / model.durationMs)) : 1;
  const clock = `${formatSeconds(Math.min(model.t, model.durationMs))}/${formatSeconds(model.durationMs)} ${model.mode === 'sim' ? 'virtual' : 'real'} `;
  const pct = ` ${String(Math.floor(share * 100)).padStart(3)}%`;
  const left =
    model.t < model.durationMs
      ? ` · ${formatSeconds(model.durationMs - model.t)} left`
      : model.variants.every((v) => v.done)
        ? ''
        : ` · ${drainingFor(model)}`;
  const barW = Math.max(10, Math.min(60, width - clock.length - pct.length - left.length - 2));
  const full = Math.round(share * barW);
  return [
    seg(clock),
    seg('['),
    seg('█'.repeat(full), 'accent'),
    seg('░'.repeat(barW - full), 'dim'),
    seg(']'),
    seg(pct),
    seg(left, 'dim'),
  ];
}

/** Candidate headlines, longest first: the first that fits the width is shown. */
function headlineCandidates(variants: readonly RunView[]): Line[][] {
  const overall = (v: RunView) => amplificationCell(v, 'overall');
  const now = (v: RunView) => amplificationCell(v, 'now');
  const label = seg('amplification ', 'bold');
  if (variants.length === 1 && variants[0].hops !== undefined) {
    // A gateway under test: each hop labelled, and the total.
    const v = variants[0];
    const hops: Line = [
      seg('hop 1 '),
      ...overall(v),
      seg(' · hop 2 '),
      ...hopCell(v, 'hop2'),
      seg(' · total '),
      ...hopCell(v, 'total'),
    ];
    return [[[label, ...hops, seg(' · hop 1 now ', 'dim'), ...now(v)]], [[label, ...hops]]];
  }
  if (variants.length === 1) {
    const v = variants[0];
    return [
      [
        [
          label,
          ...overall(v),
          seg(' overall · now ', 'dim'),
          ...now(v),
          seg(' (last 5 s)', 'dim'),
          seg(` · goodput ${formatRate(v.snapshot.goodput)}`, 'dim'),
        ],
      ],
      [[label, ...overall(v), seg(' overall · now ', 'dim'), ...now(v)]],
    ];
  }
  // Variants run through a gateway: the total first, hop 1 after it.
  const full = (v: RunView): Line =>
    v.hops === undefined
      ? [seg(`${v.name} `, 'bold'), ...overall(v), seg(' (now ', 'dim'), ...now(v), seg(')', 'dim')]
      : [
          seg(`${v.name} total `, 'bold'),
          ...hopCell(v, 'total'),
          seg(' (hop 1 ', 'dim'),
          ...overall(v),
          seg(')', 'dim'),
        ];
  const short = (v: RunView): Line =>
    v.hops === undefined
      ? [seg(`${v.name} `, 'bold'), ...overall(v)]
      : [seg(`${v.name} total `, 'bold'), ...hopCell(v, 'total')];
  return [
    [[label, ...joined(variants.map(full))]],
    [[label, ...joined(variants.map(short))]],
    // One variant per line when even the short form does not fit side by side.
    [[label], ...variants.map((v) => [seg('  '), ...full(v)])],
  ];
}

/** The headline: amplification overall and now, for each variant side by side when they fit. */
export function headlineLines(variants: readonly RunView[], width: number): Line[] {
  if (variants.length === 0) return [[seg('amplification ', 'bold'), seg('— (starting)', 'dim')]];
  const candidates = headlineCandidates(variants);
  return candidates.find((c) => c.every((l) => lineWidth(l) <= width)) ?? candidates[candidates.length - 1];
}

/** Duplicate side effects (executions beyond the first of an intent) of a variant's side-effect tools, undefined without any. */
function duplicatesOf(v: RunView): number | undefined {
  const tools = (v.snapshot.tools ?? []).filter((t) => t.sideEffect);
  return tools.length === 0 ? undefined : tools.reduce((n, t) => n + t.duplicates, 0);
}

/**
 * The duplicates headline, for a scenario whose tools have side effects: each variant's
 * duplicate executions side by side (✗ red at any, ✓ green at none), one per line when they
 * do not fit on one. None without side-effect tools.
 *
 *   duplicates naive ✗ 477 · engine ✓ 0 (side effects done twice)
 */
export function duplicatesLines(variants: readonly RunView[], width: number): Line[] {
  const cells = variants.flatMap((v): Line[] => {
    const n = duplicatesOf(v);
    if (n === undefined) return [];
    return [[seg(`${v.name} `, 'bold'), seg(n > 0 ? `✗ ${formatCount(n)}` : '✓ 0', n > 0 ? 'bad' : 'good')]];
  });
  if (cells.length === 0) return [];
  const label = seg('duplicates ', 'bold');
  const candidates: Line[][] = [
    [[label, ...joined(cells), seg(' (side effects done twice)', 'dim')]],
    [[label, ...joined(cells)]],
    [[seg('duplicates', 'bold')], ...cells.map((c) => [seg('  '), ...c])],
  ];
  return candidates.find((c) => c.every((l) => lineWidth(l) <= width)) ?? candidates[candidates.length - 1];
}

/** Status line, progress bar, the amplification headline and, with side-effect tools, the duplicates headline. */
export function headerLines(model: DashboardModel, width: number): Line[] {
  return [
    statusLine(model),
    progressBarLine(model, width),
    ...headlineLines(model.variants, width),
    ...duplicatesLines(model.variants, width),
  ];
}

export interface HeaderProps {
  model: DashboardModel;
  width: number;
  color: boolean;
}

/**
 * The top of the dashboard:
 *
 *   stormlab retry-storm · sim · seed 1 · 10x speed · ▶ running
 *   32.4s/60.0s virtual [███████████████████████░░░░░░░░░░░░░░░░░░]  54% · 27.6s left
 *   amplification naive ✗ 14.2× (now ✗ 27.0×) · engine ✓ 1.08× (now ✓ 0.42×)
 */
export function Header({ model, width, color }: HeaderProps) {
  return <Lines lines={headerLines(model, width)} width={width} color={color} />;
}
