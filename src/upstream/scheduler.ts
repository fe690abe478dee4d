/**
 * How event-driven parts (the upstream model, the traffic interpreter) ask for time to pass.
 * The simulator implements it with a typed-array heap on a virtual clock, the live driver with
 * real timers. Events are (time, handler, kind, id) — plain numbers, no closure per event —
 * and fire in time order, ties in the order they were scheduled.
 */
export interface EventHandler {
  handle(kind: number, id: number, now: number): void;
}

export interface Scheduler {
  now(): number;
  /** Registers a handler once; events name it by the returned index. */
  register(handler: EventHandler): number;
  /** Calls `handler.handle(kind, id, at)` at time `at` (never earlier than now). */
  schedule(at: number, handler: number, kind: number, id: number): void;
}
