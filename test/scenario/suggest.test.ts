import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from '../../src/scenario/suggest.js';

describe('suggestions', () => {
  it('measures edits, ignoring case, _ and -', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('fan_out', 'fanout')).toBe(0);
    expect(editDistance('Max-Attempts', 'maxAttempts')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests only close candidates', () => {
    expect(closest('attemps', ['policy', 'attempts', 'backoff'])).toBe('attempts');
    expect(closest('timout', ['name', 'fanout', 'timeout'])).toBe('timeout');
    expect(closest('colour', ['name', 'seed', 'duration'])).toBeUndefined();
    expect(closest('k', ['k', 'windowMs'])).toBe('k');
    expect(didYouMean('fan_out', ['fanout'])).toBe(' (did you mean fanout?)');
    expect(didYouMean('zzz', ['fanout'])).toBe('');
  });

  it('falls back to the one candidate holding the word whole', () => {
    expect(closest('budget', ['maxAttempts', 'retryBudget', 'throttle'])).toBe('retryBudget');
    expect(closest('Ratio', ['failureRatio', 'slowCallMs'])).toBe('failureRatio');
    expect(closest('ratio', ['failureRatio', 'slowCallRatio'])).toBeUndefined(); // two: no guess
    expect(closest('ms', ['windowMs'])).toBeUndefined(); // too short to mean anything
  });
});
