import { afterAll, beforeAll, expect, it } from 'vitest';
import { SeededRandom } from '../../src/engine/random.js';
import { createFakeUpstream, type FakeUpstream } from 'stormlab/fake-upstream';
import { guardedFetch } from 'stormlab/undici';

/** A model that answers at once, so every test is bounded by its own round trips. */
const FAST = { name: 'primary', slots: 64, queue: 64, ttftMs: 0, tpotMs: 0 };

/** The two ways each client runs: straight at the fake upstream, or with the engine as its `fetch`. */
export const WIRINGS = ['direct', 'engine'] as const;
export type Wiring = (typeof WIRINGS)[number];

/**
 * A fake upstream for one test file (real server on port 0, one model answering every name),
 * and the `fetch` a client gets for a wiring: undefined (the client's own) or `guardedFetch`.
 */
export function useCompatUpstream(): {
  fu(): FakeUpstream;
  fetchFor(w: Wiring): typeof fetch | undefined;
  /** Model requests since `mark()`, by route. */
  since(mark: number): Array<{ route: string; model: string | null; status: number }>;
  mark(): number;
  /**
   * Call inside a wiring's describe: its last test checks that with the engine every model
   * request the server saw went through the guard (one attempt each), and without it none did.
   */
  checkWiring(w: Wiring): void;
} {
  let fu: FakeUpstream | undefined;
  let attempts = 0;
  beforeAll(async () => {
    fu = await createFakeUpstream({ upstream: { models: [FAST] }, random: new SeededRandom(3), seed: 11 });
  });
  afterAll(async () => {
    await fu?.close();
  });
  const get = () => {
    if (fu === undefined) throw new Error('the fake upstream is not started');
    return fu;
  };
  return {
    fu: get,
    fetchFor: (w) =>
      w === 'engine'
        ? guardedFetch({
            targets: [get().url],
            random: new SeededRandom(5),
            onEvent: (e) => {
              if (e.type === 'attempt') attempts++;
            },
          })
        : undefined,
    mark: () => get().requests().length,
    since: (mark) => get().requests().slice(mark),
    checkWiring(w) {
      let requests = 0;
      let before = 0;
      beforeAll(() => {
        requests = get().requests().length;
        before = attempts;
      });
      it(w === 'engine' ? 'every model request went through the engine' : 'no request went through the engine', () => {
        const seen = get().requests().length - requests;
        expect(seen).toBeGreaterThan(0);
        expect(attempts - before).toBe(w === 'engine' ? seen : 0);
      });
    },
  };
}

/** The tool every loop offers: its arguments must come back valid against this schema. */
export const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2 },
    unit: { type: 'string', enum: ['c', 'f'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
} as const;

export interface WeatherArgs {
  city: string;
  unit: 'c' | 'f';
  days: number;
}

/** Checks arguments against WEATHER_SCHEMA by hand (what a strict tool runner would refuse). */
export function isWeatherArgs(v: unknown): v is WeatherArgs {
  const a = v as WeatherArgs;
  return (
    typeof a === 'object' &&
    a !== null &&
    typeof a.city === 'string' &&
    a.city.length >= 2 &&
    (a.unit === 'c' || a.unit === 'f') &&
    Number.isInteger(a.days) &&
    a.days >= 1 &&
    a.days <= 7
  );
}

export const TOOL_RESULT = 'sunny, 21 degrees';
