import { describe, expect, it } from 'vitest';
import { formatSeconds, progressLine } from '../../src/report/progress-line.js';
import { engineView, frame, naiveView, oneVariant, twoVariants } from './fixture.js';

describe('progressLine', () => {
  it('gives the clock and each variant’s figures on one plain line', () => {
    expect(progressLine(twoVariants())).toBe(
      '[ 32.4s/60.0s  54%] naive 14.2× (last 5s 27.0×) · goodput 12.3/s · 429 0.0 % · 5xx 95.6 % | engine 1.08× (last 5s 0.42×) · goodput 12.9/s · 429 0.0 % · 5xx 40.0 %',
    );
    expect(progressLine(oneVariant({ t: 2_000 }))).toMatch(/^\[ {2}2\.0s\/60\.0s {3}3%\] engine 1\.08×/);
  });

  it('has no escape codes and no line breaks', () => {
    for (const model of [twoVariants(), oneVariant({ paused: true }), frame([])]) {
      const line = progressLine(model);
      expect(line).not.toMatch(/[\u001b\n\r]/);
    }
  });

  it('adds the timeout share when there is one, and says draining and done', () => {
    const v = naiveView();
    v.snapshot.upstream.share.timeout = 0.031;
    expect(progressLine(frame([v]))).toContain('· timeout 3.1 %');
    // The clock stops at the duration; the drain is counted on its own (never `[110s/60.0s 100%]`).
    expect(progressLine(twoVariants({ t: 65_000 }))).toMatch(/^\[ 60\.0s\/60\.0s 100%\].* · draining \+5\.0s$/);
    expect(progressLine(twoVariants({ t: 110_000 }))).toMatch(/^\[ 60\.0s\/60\.0s 100%\].* · draining \+50\.0s$/);
    expect(
      progressLine(
        frame(
          [
            { ...naiveView(), done: true },
            { ...engineView(), done: true },
          ],
          { t: 70_000 },
        ),
      ),
    ).toMatch(/ · done$/);
  });

  it('formats run time short and steady', () => {
    expect(formatSeconds(0)).toBe('0.0s');
    expect(formatSeconds(12_040)).toBe('12.0s');
    expect(formatSeconds(180_000)).toBe('180s');
  });
});
