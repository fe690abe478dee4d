import { describe, expect, it } from 'vitest';
import { OptionError, StreamError } from '../../src/engine/errors.js';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { Guard, type AttemptContext } from '../../src/engine/guard.js';
import type { GuardOptions } from '../../src/engine/guard-options.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { drive } from '../helpers/drive.js';

// GuardCall.resume: a committed answer that broke is continued only on targets that declare
// continuation: prefill — the same target first, then the next declaring one — and each
// resumption is an attempt like a retry.

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

function setup(targets: GuardOptions['targets'], options: Partial<GuardOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const events: GuardEvent[] = [];
  const guard = new Guard({
    clock,
    random: new SeededRandom(7),
    onEvent: (e) => events.push(e),
    targets,
    maxAttempts: 3,
    ...options,
  });
  return { clock, guard, events };
}

const cut = () => new StreamError('stream_cut', 'stream closed before its terminal signal');
const stall = () => new StreamError('stream_stall', 'no event for 500 ms');

/** An attempt function whose first attempt breaks after commit and asks for the rest; `then` answers the others. */
function breaksThen(first: () => Error, then: (ctx: AttemptContext, n: number) => string | Promise<string>) {
  const seen: string[] = [];
  const fn = async (ctx: AttemptContext): Promise<string> => {
    seen.push(ctx.targetName);
    if (seen.length === 1) {
      const e = first();
      ctx.resume((e as StreamError).kind);
      throw e;
    }
    return then(ctx, seen.length);
  };
  return { seen, fn };
}

describe('resume: continuing a committed answer that broke', () => {
  it('skips targets that do not declare continuation: the first declaring one gets the resumption', async () => {
    const { guard, clock, events } = setup([
      { name: 'a', model: 'a' },
      { name: 'b', model: 'b' },
      { name: 'c', model: 'c', continuation: 'prefill' },
    ]);
    const { seen, fn } = breaksThen(cut, () => 'rest');
    const r = await drive(clock, guard.runDetailed(fn));
    expect(seen).toEqual(['a', 'c']);
    expect(r).toMatchObject({ value: 'rest', target: 'c', attempts: 2 });
    expect(events.filter((e) => e.type === 'resume')).toEqual([
      { type: 'resume', at: 1_000_000, target: 'a', class: 'stream_cut' },
    ]);
    expect(events.find((e) => e.type === 'fallback')).toMatchObject({ from: 'a', to: 'c', why: 'stream_cut' });
  });

  it('a cut on a declaring target is resumed there first (a retry, after a backoff)', async () => {
    const { guard, clock, events } = setup([
      { name: 'a', model: 'a', continuation: 'prefill' },
      { name: 'b', model: 'b', continuation: 'prefill' },
    ]);
    const { seen, fn } = breaksThen(cut, () => 'rest');
    await drive(clock, guard.run(fn));
    expect(seen).toEqual(['a', 'a']);
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ target: 'a', class: 'stream_cut' });
  });

  it('a stall is resumed on the next declaring target at once (onTimeout: fallback)', async () => {
    const { guard, clock } = setup([
      { name: 'a', model: 'a', continuation: 'prefill' },
      { name: 'b', model: 'b', continuation: 'prefill' },
    ]);
    const { seen, fn } = breaksThen(stall, () => 'rest');
    await drive(clock, guard.run(fn));
    expect(seen).toEqual(['a', 'b']);
  });

  it('a stall on the only declaring target is resumed there again (nowhere else to go)', async () => {
    const { guard, clock } = setup([
      { name: 'a', model: 'a', continuation: 'prefill' },
      { name: 'b', model: 'b' },
    ]);
    const { seen, fn } = breaksThen(stall, () => 'rest');
    expect(await drive(clock, guard.run(fn))).toBe('rest');
    expect(seen).toEqual(['a', 'a']);
  });

  it('a rejected prefill (400) moves to the next declaring target, never to the caller while one is left', async () => {
    const { guard, clock } = setup([
      { name: 'a', model: 'a', continuation: 'prefill' },
      { name: 'b', model: 'b' },
      { name: 'c', model: 'c', continuation: 'prefill' },
    ]);
    const { seen, fn } = breaksThen(cut, (ctx) => {
      if (ctx.targetName === 'a') throw new HttpError(400);
      return 'rest';
    });
    expect(await drive(clock, guard.run(fn))).toBe('rest');
    expect(seen).toEqual(['a', 'a', 'c']);
  });

  it('with no declaring target left the call fails with the last error', async () => {
    const { guard, clock } = setup([
      { name: 'a', model: 'a' },
      { name: 'b', model: 'b' },
    ]);
    const { seen, fn } = breaksThen(cut, () => 'never');
    await expect(drive(clock, guard.run(fn))).rejects.toMatchObject({ kind: 'stream_cut' });
    expect(seen).toEqual(['a']);
  });

  it('resumptions count as retries: the budget and maxAttempts bound them', async () => {
    const { guard, clock } = setup([{ name: 'a', model: 'a', continuation: 'prefill' }], { maxAttempts: 2 });
    const { seen, fn } = breaksThen(cut, () => {
      throw cut();
    });
    await expect(drive(clock, guard.run(fn))).rejects.toMatchObject({ kind: 'stream_cut' });
    expect(seen).toEqual(['a', 'a']);
  });

  it('a continuation other than prefill is refused', () => {
    expect(() => setup([{ name: 'a', continuation: 'yes' as 'prefill' }])).toThrow(OptionError);
    expect(() => setup([{ name: 'a', continuation: 'yes' as 'prefill' }])).toThrow(
      'guard.targets[0].continuation must be prefill (or absent), got "yes"',
    );
  });
});

describe('resume in the Prometheus adapter', () => {
  it('counts resumptions by the target that broke and the class of the break', async () => {
    const { Registry } = await import('prom-client');
    const { guardMetrics } = await import('../../src/integrations/prometheus-metrics.js');
    const registry = new Registry();
    const { guard, clock } = setup(
      [
        { name: 'a', model: 'a' },
        { name: 'b', model: 'b', continuation: 'prefill' },
      ],
      { name: 'chat' },
    );
    const stop = guardMetrics(guard, { registry });
    const { fn } = breaksThen(cut, () => 'rest');
    await drive(clock, guard.run(fn));
    const { values } = await registry.getSingleMetric('stormlab_stream_resumes_total')!.get();
    expect(values).toEqual([
      expect.objectContaining({ value: 1, labels: { guard: 'chat', target: 'a', class: 'stream_cut' } }),
    ]);
    stop();
  });
});
