import { Box, useStdout } from 'ink';
import type { DashboardModel, RunView } from '../run/run-view.js';
import { dashboardLayout, GAP, gridRows, pairWidths, type DashboardView, type PanelName } from './dashboard-layout.js';
import { EnginePanel } from './EnginePanel.js';
import { FaultTimeline, faultLines } from './FaultTimeline.js';
import { Header, headerLines } from './Header.js';
import { LayersPanel } from './LayersPanel.js';
import { seg, type Line } from './line.js';
import { Lines } from './Lines.js';
import { SummaryPanel } from './SummaryPanel.js';
import { ToolsPanel } from './ToolsPanel.js';
import { loadPeak, UpstreamPanel } from './UpstreamPanel.js';

export interface DashboardProps {
  model: DashboardModel;
  /** False: no colour or other escape codes at all (the caller passes `process.env.NO_COLOR === undefined`). */
  color: boolean;
  /** Columns. @default stdout's columns, else 80 */
  width?: number;
  /**
   * Rows. @default stdout's rows − 1, else 23: a frame as tall as the terminal makes Ink clear
   * the whole screen on every frame (flicker), one row less lets it redraw in place.
   */
  height?: number;
  /** Which view, counted by `tab` presses; taken modulo the number of views the size needs. @default 0 */
  view?: number;
  /** Say `space` resumes / pauses and `q` quits in the footer. @default true */
  keys?: boolean;
}

function footerLine(model: DashboardModel, views: DashboardView[], current: number, keys: boolean): Line {
  const parts: Line = [];
  if (views.length > 1) {
    parts.push(
      seg(`view ${current + 1}/${views.length} `, 'dim'),
      seg(views[current].name, 'bold'),
      seg(' · tab next view', 'dim'),
    );
  }
  if (keys) {
    const done = model.variants.length > 0 && model.variants.every((v) => v.done);
    const keysText = done
      ? 'q quit'
      : model.mode === 'live'
        ? 'q stop'
        : `space ${model.paused ? 'resume' : 'pause'} · q quit`;
    parts.push(seg(parts.length ? ` · ${keysText}` : keysText, 'dim'));
  }
  return parts;
}

function VariantColumn({
  view,
  panels,
  width,
  color,
  max,
}: {
  view: RunView;
  panels: readonly PanelName[];
  width: number;
  color: boolean;
  /** The upstream scale the variants share (per bin); undefined for a single variant. */
  max: number | undefined;
}) {
  const pair = pairWidths(width);
  const has = (p: PanelName) => panels.includes(p);
  const paired = pair !== undefined && has('upstream') && has('engine');
  return (
    <Box flexDirection="column" width={width} flexShrink={0}>
      <SummaryPanel view={view} width={width} color={color} />
      {paired ? (
        <Box flexDirection="row" flexShrink={0}>
          <UpstreamPanel view={view} width={pair[0]} color={color} max={max} />
          <Box marginLeft={GAP} flexShrink={0}>
            <EnginePanel view={view} width={pair[1]} color={color} />
          </Box>
        </Box>
      ) : (
        <>
          {has('upstream') && <UpstreamPanel view={view} width={width} color={color} max={max} />}
          {has('engine') && <EnginePanel view={view} width={width} color={color} />}
        </>
      )}
      {has('layers') && <LayersPanel view={view} width={width} color={color} />}
      {has('tools') && <ToolsPanel view={view} width={width} color={color} />}
    </Box>
  );
}

/**
 * The whole screen for one frame: header (scenario, mode, seed, clock, progress, speed, state),
 * the amplification headline, the fault timeline, the variants in columns (side by side as far
 * as the width allows) and a footer naming the view and the keys. Everything is cut to
 * `width` × `height`; when the panels do not all fit, they are split into views (`view`).
 */
export function Dashboard({ model, color, width, height, view = 0, keys = true }: DashboardProps) {
  const { stdout } = useStdout();
  const w = Math.max(20, width ?? (stdout.columns || 80));
  const h = Math.max(6, height ?? (stdout.rows ? stdout.rows - 1 : 23));
  const layoutWith = (axis: boolean) => {
    const chrome =
      headerLines(model, w).length + faultLines(model.faults, model.t, model.durationMs, w, axis).length + 1;
    const bodyHeight = Math.max(1, h - chrome);
    return { axis, bodyHeight, layout: dashboardLayout(model, w, bodyHeight) };
  };
  // The fault bar's time axis where it costs no view: panels come first.
  const withAxis = layoutWith(true);
  const without = layoutWith(false);
  const { axis, bodyHeight, layout } = withAxis.layout.views.length <= without.layout.views.length ? withAxis : without;
  const index = ((view % layout.views.length) + layout.views.length) % layout.views.length;
  const current = layout.views[index];
  const rows = gridRows(current.variants, layout.columns);
  // One scale for every variant's attempts: side by side, a storm must look taller than a trickle.
  const max = model.variants.length > 1 ? Math.max(0, ...model.variants.map(loadPeak)) : undefined;
  return (
    <Box flexDirection="column" width={w}>
      <Header model={model} width={w} color={color} />
      <FaultTimeline
        faults={model.faults}
        t={model.t}
        durationMs={model.durationMs}
        width={w}
        color={color}
        axis={axis}
      />
      <Box flexDirection="column" height={bodyHeight} overflow="hidden" flexShrink={0}>
        <Box flexDirection="column" flexShrink={0}>
          {rows.map((row, r) => (
            <Box key={r} flexDirection="row" marginTop={r > 0 ? 1 : 0} flexShrink={0}>
              {row.map((i, c) => (
                <Box key={i} marginLeft={c > 0 ? GAP : 0} flexShrink={0}>
                  <VariantColumn
                    view={model.variants[i]}
                    panels={current.panels}
                    width={layout.columnWidth}
                    color={color}
                    max={max}
                  />
                </Box>
              ))}
            </Box>
          ))}
        </Box>
      </Box>
      <Lines lines={[footerLine(model, layout.views, index, keys)]} width={w} color={color} />
    </Box>
  );
}
