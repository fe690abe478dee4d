import { useInput, useStdin, useStdout } from 'ink';
import { useEffect, useState } from 'react';
import { Dashboard } from './Dashboard.js';
import { useThrottledFrame, type FrameSource, type FrameTimer } from './useThrottledFrame.js';

export interface AppProps {
  /** The run's frames; App re-renders at most every `intervalMs` however often it changes. */
  source: FrameSource;
  /** `q` or Ctrl-C (render with `exitOnCtrlC: false`, or Ink eats Ctrl-C itself). */
  onQuit(): void;
  /** `space`. */
  onTogglePause(): void;
  /** False: no escape codes for colour (the caller passes `process.env.NO_COLOR === undefined`). */
  color: boolean;
  /** @default stdout's columns */
  width?: number;
  /** @default stdout's rows − 1 */
  height?: number;
  /** @default 100 */
  intervalMs?: number;
  /** @default setTimeout / clearTimeout */
  timer?: FrameTimer;
  /** The view shown first. @default 0 */
  initialView?: number;
}

/** Re-renders when the terminal is resized (a paused run sends no frames to do it). */
function useResize(): void {
  const { stdout } = useStdout();
  const [, setSize] = useState(0);
  useEffect(() => {
    const onResize = () => setSize((n) => n + 1);
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
}

/**
 * The live dashboard: frames from `source` (throttled), keys `q`/Ctrl-C → `onQuit`,
 * `space` → `onTogglePause`, `tab` → next view. Knows nothing about simulations. Keys are only
 * read when stdin can go raw (a TTY); otherwise the dashboard just plays.
 */
export function App({
  source,
  onQuit,
  onTogglePause,
  color,
  width,
  height,
  intervalMs,
  timer,
  initialView = 0,
}: AppProps) {
  const model = useThrottledFrame(source, { intervalMs, timer });
  const [view, setView] = useState(initialView);
  const { isRawModeSupported } = useStdin();
  useResize();
  useInput(
    (input, key) => {
      if (input === 'q' || (key.ctrl && input === 'c')) onQuit();
      else if (input === ' ') onTogglePause();
      else if (key.tab) setView((v) => v + (key.shift ? -1 : 1));
    },
    { isActive: isRawModeSupported },
  );
  return <Dashboard model={model} color={color} width={width} height={height} view={view} keys={isRawModeSupported} />;
}
