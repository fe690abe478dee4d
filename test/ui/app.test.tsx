import { cleanup, render } from 'ink-testing-library';
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../src/ui/App.js';
import { FakeSource, FakeTimer, inAct } from './fake-source.js';
import { linesOf, twoVariants } from './fixture.js';

inAct();
afterEach(() => act(() => cleanup()));

function setup() {
  const source = new FakeSource(twoVariants());
  const onQuit = vi.fn();
  const onTogglePause = vi.fn();
  const timer = new FakeTimer();
  let app!: ReturnType<typeof render>;
  act(() => {
    app = render(
      <App
        source={source}
        onQuit={onQuit}
        onTogglePause={onTogglePause}
        color={false}
        width={80}
        height={24}
        timer={timer}
      />,
    );
  });
  const press = (key: string) => act(() => app.stdin.write(key));
  const footer = () => linesOf(app.lastFrame()).at(-1);
  return { ...app, source, onQuit, onTogglePause, timer, press, footer };
}

describe('App', () => {
  it('renders the source through the dashboard and follows its changes', () => {
    const { lastFrame, source, timer } = setup();
    expect(linesOf(lastFrame())[2]).toContain('naive ✗ 14.2×');
    act(() => source.set(twoVariants({ paused: true })));
    expect(linesOf(lastFrame())[0]).toContain('‖ paused');
    act(() => source.set(twoVariants({ paused: false, t: 40_000 })));
    act(() => timer.fire());
    expect(linesOf(lastFrame())[1]).toMatch(/^40\.0s\/60\.0s/);
  });

  it('q and Ctrl-C call onQuit, space calls onTogglePause', () => {
    const { press, onQuit, onTogglePause } = setup();
    press('q');
    expect(onQuit).toHaveBeenCalledTimes(1);
    press('\u0003');
    expect(onQuit).toHaveBeenCalledTimes(2);
    press(' ');
    expect(onTogglePause).toHaveBeenCalledTimes(1);
    press('x');
    expect(onQuit).toHaveBeenCalledTimes(2);
    expect(onTogglePause).toHaveBeenCalledTimes(1);
  });

  it('tab switches views, round and round', () => {
    const { press, footer } = setup();
    expect(footer()).toMatch(/^view 1\/2 overview/);
    press('\t');
    expect(footer()).toMatch(/^view 2\/2 layers/);
    press('\t');
    expect(footer()).toMatch(/^view 1\/2 overview/);
  });
});
