import type { SeriesResult } from '../run/metrics/result.js';
import type { HopView, RunView } from '../run/run-view.js';
import { formatSeconds } from '../report/progress-line.js';
import { formatCount, formatPercent, formatRate, formatTimes } from '../report/format.js';
import { amplificationHealth, errorShareHealth, marked, tone } from './health.js';
import { padEnd, padStart, seg, type Line } from './line.js';
import { Lines } from './Lines.js';
import type { PanelProps } from './SummaryPanel.js';
import { sparkline } from './Sparkline.js';

/** The values of the bins that are over by `t` (the second in progress would read low). */
export function completeBins(series: SeriesResult, values: readonly number[], t: number): number[] {
  const done = Math.floor(t / series.binMs) - series.fromBin;
  return values.slice(0, Math.max(0, Math.min(values.length, done)));
}

/** The highest attempts or logical calls per bin a variant has drawn so far. */
export function loadPeak(view: RunView): number {
  const s = view.snapshot.series;
  const t = view.snapshot.t;
  return Math.max(0, ...completeBins(s, s.upstreamAttempts, t), ...completeBins(s, s.leafCalls, t));
}

const LABEL = 9;
const VALUE = 8;

/**
 * The upstream: attempts/s against logical leaf calls/s on one scale (the gap between the two
 * lines is the amplification), error shares, queue, busy slots and wasted tokens. `sharedMax`
 * (per bin) puts every variant of a compare on one scale, so a storm's 799/s draws taller
 * than an engine's 44/s; the header says what a full block is.
 *
 *   upstream · 60 s · █ 1.62k/s shared
 *   attempts ▁▁▁▁▁▁▁▁▁████████████ 1.62k/s
 *   logical  ▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁    60.0/s
 *   429 0.0 %  5xx 95.6 %  timeout 0.0 %
 *   queue 128  busy 64  wasted 1.23M tok
 *
 * With a gateway under test the first part is hop 1 (driver → gateway) and says so, and hop 2
 * (gateway → upstream) follows in place of the queue line (`hopLines`).
 */
export function upstreamLines(view: RunView, width: number, sharedMax?: number): Line[] {
  const s = view.snapshot;
  const attempts = completeBins(s.series, s.series.upstreamAttempts, s.t);
  const logical = completeBins(s.series, s.series.leafCalls, s.t);
  const perSec = 1000 / s.series.binMs;
  const max = Math.max(sharedMax ?? 0, loadPeak(view));
  const spark = Math.max(4, Math.min(60, width - LABEL - VALUE - 1));
  const nowAttempts = (attempts.at(-1) ?? 0) * perSec;
  const nowLogical = (logical.at(-1) ?? 0) * perSec;
  const ampTone = tone(amplificationHealth(nowLogical > 0 ? nowAttempts / nowLogical : 0));
  const share = s.upstream.share;
  const shareItem = (label: string, x: number): Line => [
    seg(`${label} `),
    ...marked(formatPercent(x), errorShareHealth(x)).slice(1),
  ];
  const busy = view.upstream.models.reduce((n, m) => n + m.busy, 0);
  const queued = view.upstream.models.reduce((n, m) => n + m.queued, 0);
  const hops = view.hops;
  return [
    [
      seg(hops === undefined ? 'upstream' : 'hop 1 · driver → gateway', 'bold'),
      seg(' · 60 s', 'dim'),
      ...(max > 0 ? [seg(` · █ ${formatRate(max * perSec)}${sharedMax === undefined ? '' : ' shared'}`, 'dim')] : []),
    ],
    [
      seg(padEnd('attempts', LABEL)),
      seg(sparkline(attempts, spark, max), ampTone),
      seg(padStart(formatRate(nowAttempts), VALUE + 1)),
    ],
    [
      seg(padEnd('logical', LABEL)),
      seg(sparkline(logical, spark, max), 'accent'),
      seg(padStart(formatRate(nowLogical), VALUE + 1)),
    ],
    [
      ...shareItem('429', share['429']),
      seg('  '),
      ...shareItem('5xx', share['5xx']),
      seg('  '),
      ...shareItem('timeout', share.timeout),
    ],
    ...(hops === undefined
      ? [
          [
            seg(`queue ${formatCount(queued)}  busy ${formatCount(busy)}  wasted `),
            seg(`${formatCount(s.upstream.wastedTokens)} tok`, s.upstream.wastedTokens > 0 ? 'warn' : 'plain'),
          ],
        ]
      : hopLines(view, hops)),
  ];
}

/**
 * Hop 2, behind the gateway: what reached the upstream, hop 2's and the total amplification,
 * the statuses the upstream sent, its load, and while hop 2 settles after the run, how long.
 *
 *   hop 2 · gateway → upstream  270 reached  3.00×  total 9.00×
 *   503 270  in flight 0  busy 0  queue 0
 *   settling 1.2s · quiet 0.3s of 5.0s (at most 60s)
 */
function hopLines(view: RunView, hops: HopView): Line[] {
  const leaf = view.snapshot.layers.at(-1)?.logicalCalls ?? 0;
  const hop2 = hops.sent > 0 ? hops.reached / hops.sent : 0;
  const total = leaf > 0 ? hops.reached / leaf : 0;
  const statuses = Object.entries(hops.status)
    .filter(([k]) => k !== 'inFlight')
    .map(([k, n]) => `${k} ${formatCount(n)}`);
  const lines: Line[] = [
    [
      seg('hop 2 · gateway → upstream', 'bold'),
      seg(`  ${formatCount(hops.reached)} reached  `),
      ...marked(formatTimes(hop2), amplificationHealth(hop2)),
      seg('  total '),
      ...marked(formatTimes(total), amplificationHealth(total)),
    ],
    [
      seg(
        [
          ...statuses,
          `in flight ${formatCount(hops.inFlight)}`,
          `busy ${formatCount(hops.busy)}`,
          `queue ${formatCount(hops.queued)}`,
        ].join('  '),
      ),
    ],
  ];
  const w = hops.settling;
  if (w !== undefined)
    lines.push([
      seg(
        `settling ${formatSeconds(w.waitedMs)} · quiet ${formatSeconds(Math.min(w.quietForMs, w.quietMs))} of ${formatSeconds(w.quietMs)} (at most ${formatSeconds(w.timeoutMs)})`,
        'warn',
      ),
    ]);
  return lines;
}

/** Upstream load and health for one variant; `max` is the scale the variants share (per bin). */
export function UpstreamPanel({ view, width, color, max }: PanelProps & { max?: number }) {
  return <Lines lines={upstreamLines(view, width, max)} width={width} color={color} />;
}
