import { useLayoutEffect, useState } from 'react';
import type { DashboardModel } from '../run/run-view.js';

/** Where frames come from: the latest frame on demand, and a call on every change. */
export interface FrameSource<T = DashboardModel> {
  frame(): T;
  /** Calls `listener` after each change; returns a function that stops it. */
  subscribe(listener: () => void): () => void;
}

/** The timer the hook uses, injectable so tests drive it without sleeping. */
export interface FrameTimer {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimer: FrameTimer = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface ThrottleOptions {
  /** At most one render per this many ms. @default 100 (10 frames/s) */
  intervalMs?: number;
  /** @default realTimer (setTimeout / clearTimeout) */
  timer?: FrameTimer;
}

/**
 * The source's latest frame, re-rendered at most once per `intervalMs`, however often the
 * source changes. Leading and trailing edge: the first change after a quiet spell shows at
 * once, changes during the interval collapse into one render when it ends — so the last frame
 * of a run is always shown. Reads no clock: only the timer, which tests replace.
 */
export function useThrottledFrame<T = DashboardModel>(
  source: FrameSource<T>,
  { intervalMs = 100, timer = realTimer }: ThrottleOptions = {},
): T {
  // A fresh wrapper per render, so a source that mutates one frame object still re-renders.
  const [state, setState] = useState(() => ({ frame: source.frame() }));
  // Layout effect: subscribed as soon as the tree is committed, not on some later tick.
  // biome-ignore lint/correctness/useExhaustiveDependencies: subscribes once per source; the first frame is compared, not tracked
  useLayoutEffect(() => {
    let handle: unknown;
    let waiting = false;
    let dirty = false;
    let live = true;
    const show = () => setState({ frame: source.frame() });
    const arm = () => {
      waiting = true;
      handle = timer.setTimeout(tick, intervalMs);
    };
    function tick() {
      waiting = false;
      if (!live || !dirty) return;
      dirty = false;
      show();
      arm();
    }
    const onChange = () => {
      if (!live) return;
      if (waiting) dirty = true;
      else {
        show();
        arm();
      }
    };
    const unsubscribe = source.subscribe(onChange);
    // A change between the first render and the subscription is not lost.
    if (source.frame() !== state.frame) onChange();
    return () => {
      live = false;
      unsubscribe();
      if (waiting) timer.clearTimeout(handle);
    };
    // `state` is read once, at subscription: re-subscribing on every frame would defeat the throttle.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source, intervalMs, timer]);
  return state.frame;
}
