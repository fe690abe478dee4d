import { Text } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { useThrottledFrame, type FrameTimer } from '../../src/ui/useThrottledFrame.js';
import { FakeSource, FakeTimer, inAct } from './fake-source.js';
import { oneVariant } from './fixture.js';

inAct();
afterEach(() => act(() => cleanup()));

function Probe({ source, timer, counter }: { source: FakeSource; timer: FrameTimer; counter: { renders: number } }) {
  const model = useThrottledFrame(source, { intervalMs: 100, timer });
  counter.renders++;
  return <Text>t={model.t}</Text>;
}

function mount(source: FakeSource, timer: FakeTimer, counter = { renders: 0 }) {
  let app!: ReturnType<typeof render>;
  act(() => {
    app = render(<Probe source={source} timer={timer} counter={counter} />);
  });
  return app;
}

describe('useThrottledFrame', () => {
  it('collapses many updates into a leading and a trailing render per interval', () => {
    const source = new FakeSource(oneVariant({ t: 0 }));
    const timer = new FakeTimer();
    const counter = { renders: 0 };
    const { lastFrame } = mount(source, timer, counter);
    expect(counter.renders).toBe(1);
    expect(source.subscribers).toBe(1);

    act(() => {
      for (let t = 1; t <= 1000; t++) source.set(oneVariant({ t }));
    });
    // The first change shows at once; the other 999 wait for the interval.
    expect(counter.renders).toBe(2);
    expect(lastFrame()).toBe('t=1');
    expect(timer.size).toBe(1);
    expect(timer.delays).toEqual([100]);

    act(() => timer.fire());
    expect(counter.renders).toBe(3);
    expect(lastFrame()).toBe('t=1000');

    // A quiet interval: no render, and the timer stops.
    act(() => timer.fire());
    expect(counter.renders).toBe(3);
    expect(timer.size).toBe(0);

    // The next change after a quiet spell shows at once again.
    act(() => source.set(oneVariant({ t: 2000 })));
    expect(counter.renders).toBe(4);
    expect(lastFrame()).toBe('t=2000');
  });

  it('renders at most once per interval under a steady stream of changes', () => {
    const source = new FakeSource(oneVariant({ t: 0 }));
    const timer = new FakeTimer();
    const counter = { renders: 0 };
    const { lastFrame } = mount(source, timer, counter);
    // 10 intervals with 50 changes each: one render per interval, plus the first.
    for (let i = 0; i < 10; i++) {
      act(() => {
        for (let j = 1; j <= 50; j++) source.set(oneVariant({ t: i * 50 + j }));
      });
      act(() => timer.fire());
    }
    expect(counter.renders).toBe(1 + 1 + 10);
    expect(lastFrame()).toBe('t=500');
  });

  it('re-renders a source that mutates one frame object in place', () => {
    const model = oneVariant({ t: 0 });
    const source = new FakeSource(model);
    const { lastFrame } = mount(source, new FakeTimer());
    model.t = 5;
    act(() => source.set(model));
    expect(lastFrame()).toBe('t=5');
  });

  it('unsubscribes and cancels its timer on unmount', () => {
    const source = new FakeSource(oneVariant({ t: 0 }));
    const timer = new FakeTimer();
    const { unmount } = mount(source, timer);
    act(() => source.set(oneVariant({ t: 1 })));
    expect(timer.size).toBe(1);
    act(() => unmount());
    expect(source.subscribers).toBe(0);
    expect(timer.size).toBe(0);
  });
});
