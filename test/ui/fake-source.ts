import type { DashboardModel } from '../../src/run/run-view.js';
import type { FrameSource, FrameTimer } from '../../src/ui/useThrottledFrame.js';

/** A frame source the test sets by hand; `set` tells every subscriber. */
export class FakeSource implements FrameSource {
  private readonly listeners = new Set<() => void>();
  constructor(public model: DashboardModel) {}
  frame(): DashboardModel {
    return this.model;
  }
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(model: DashboardModel): void {
    this.model = model;
    for (const l of this.listeners) l();
  }
  get subscribers(): number {
    return this.listeners.size;
  }
}

/** A timer that only fires when the test says so. */
export class FakeTimer implements FrameTimer {
  private readonly pending = new Map<number, () => void>();
  private next = 1;
  readonly delays: number[] = [];
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, callback);
    this.delays.push(ms);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Runs every timer pending now (not those they set). */
  fire(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const callback of due) callback();
  }
  get size(): number {
    return this.pending.size;
  }
}

/**
 * React commits state updates on its own schedule; inside `act` it commits them (and runs
 * effects, such as useInput's stdin listener) before returning — no sleeping, no guessing.
 */
export function inAct(): void {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
}
