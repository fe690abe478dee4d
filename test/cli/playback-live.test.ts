import { describe, expect, it } from 'vitest';
import { Playback, type Steppable } from '../../src/cli/playback.js';
import type { RunView } from '../../src/run/run-view.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { oneVariant } from '../ui/fixture.js';

/** A live run as Playback sees it: a clock and a done flag it cannot move. */
class FakeLive implements Steppable {
  now = 0;
  done = false;
  views = 0;
  view(name: string): RunView {
    this.views++;
    return { ...oneVariant().variants[0], name, done: this.done };
  }
}

const scenario = loadScenario('retry-storm');

describe('Playback of live runs', () => {
  it('shows real time: the clock of the variant in progress, mode live, no pause', () => {
    const a = new FakeLive();
    const b = new FakeLive();
    const p = new Playback(
      scenario,
      [
        { name: 'naive', sim: a },
        { name: 'engine', sim: b },
      ],
      1,
    );
    expect(p.live).toBe(true);
    a.now = 1_500;
    p.tick(100);
    expect(p.frame()).toMatchObject({ mode: 'live', t: 1_500, speed: 1, paused: false });
    p.togglePause();
    expect(p.paused).toBe(false);
    // The first is over; the second has not started: the clock stays at the first's end.
    a.now = 60_000;
    a.done = true;
    p.tick(100);
    expect(p.frame().t).toBe(60_000);
    expect(p.done).toBe(false);
    b.now = 2_000;
    p.tick(100);
    expect(p.frame().t).toBe(2_000);
    expect(p.frame().variants.map((v) => [v.name, v.done])).toEqual([
      ['naive', true],
      ['engine', false],
    ]);
    b.done = true;
    expect(p.done).toBe(true);
    expect(p.interrupted).toBe(false);
  });

  it('every tick takes a fresh frame (the runs move by themselves), the last one too', () => {
    const a = new FakeLive();
    const p = new Playback(scenario, [{ name: 'x', sim: a }], 1);
    let changes = 0;
    p.subscribe(() => changes++);
    p.frame();
    p.tick(100);
    p.frame();
    a.done = true;
    p.tick(100);
    expect(p.frame().variants[0].done).toBe(true);
    expect(changes).toBe(2);
    expect(a.views).toBe(3);
  });

  it('stop() is an interruption while a run is still going', () => {
    const a = new FakeLive();
    const p = new Playback(scenario, [{ name: 'x', sim: a }], 1);
    p.stop();
    expect(p.done).toBe(true);
    expect(p.interrupted).toBe(true);
  });
});
