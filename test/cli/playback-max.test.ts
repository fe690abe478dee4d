import { describe, expect, it } from 'vitest';
import { Playback, type Steppable } from '../../src/cli/playback.js';
import type { RunView } from '../../src/run/run-view.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { oneVariant } from '../ui/fixture.js';

/** A simulation that ends at `endMs` of virtual time and costs `costPerMs` of (fake) wall time per virtual ms. */
class FakeSim implements Steppable {
  now = 0;
  done = false;
  steps: number[] = [];
  constructor(
    private readonly endMs: number,
    private readonly wall: { t: number },
    private readonly costPerMs: number,
  ) {}
  advanceTo(t: number): void {
    const to = Math.min(t, this.endMs);
    this.wall.t += (to - this.now) * this.costPerMs;
    this.steps.push(to - this.now);
    this.now = to;
    this.done = to >= this.endMs;
  }
  view(name: string): RunView {
    return { ...oneVariant().variants[0], name, done: this.done };
  }
}

const scenario = loadScenario('retry-storm'); // 60 s

function playAtMax(costPerMs: number, endMs: number, maxTicks: number) {
  const wall = { t: 0 };
  const sim = new FakeSim(endMs, wall, costPerMs);
  const p = new Playback(scenario, [{ name: 'x', sim }], Infinity, undefined, () => wall.t);
  let ticks = 0;
  while (!p.done && ticks < maxTicks) {
    p.tick(16);
    ticks++;
  }
  return { p, sim, ticks };
}

describe('Playback at speed max', () => {
  it('a cheap run ends in a handful of ticks: each step doubles while ticks stay short', () => {
    const { p, sim, ticks } = playAtMax(0, 180_000, 100);
    expect(p.done).toBe(true);
    expect(sim.steps.slice(0, 3)).toEqual([600, 1200, 2400]);
    expect(ticks).toBeLessThan(10);
  });

  it('a costly run keeps ticks near a frame: steps shrink when one takes long, so q is heard between them', () => {
    // 1 ms of wall time per 5 ms of virtual time: the first 600 ms step costs 120 ms, over twice the aim.
    const { p, sim } = playAtMax(0.2, 180_000, 5);
    expect(p.done).toBe(false);
    expect(sim.steps.slice(0, 3)).toEqual([600, 300, 300]);
    p.stop();
    expect(p.interrupted).toBe(true);
  });
});
