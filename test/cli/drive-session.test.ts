import { describe, expect, it } from 'vitest';
import { type DrivenSession, driveSession, liveResultFile } from '../../src/cli/commands/drive-session.js';
import type { StopCause } from '../../src/cli/io.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { captureIo } from './capture-io.js';
import { oneVariant } from '../ui/fixture.js';

const scenario = loadScenario(
  `
name: driven
duration: 10s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 10, completion: 2 }
layers: [{ name: llm, retry: { policy: none }, models: [m] }]
upstream: { models: [{ name: m, slots: 1, queue: 0, ttft: 1ms, tpot: 1ms }] }
`,
  { source: 'driven.yaml' },
);

/** A session whose end the test decides, recording the stops it hears. */
function session(waiting?: boolean) {
  let end = (): void => {};
  const stops: StopCause[] = [];
  let now = 0;
  const s: DrivenSession & { stops: StopCause[]; end(): void; at(t: number): void } = {
    done: new Promise<void>((resolve) => {
      end = resolve;
    }),
    steps: () => [
      {
        name: 'v',
        sim: {
          get now() {
            return now;
          },
          get done() {
            return false;
          },
          view: () => oneVariant({ t: now }).variants[0],
        },
      },
    ],
    stop: (cause) => void stops.push(cause),
    restore: async () => undefined,
    ...(waiting === undefined ? {} : { waiting }),
    stops,
    end: () => end(),
    at: (t) => {
      now = t;
    },
  };
  return s;
}

/** An io whose stops the test sends: `send` reaches whoever is subscribed, as a signal would. */
function stoppableIo() {
  const io = captureIo();
  const subscribed = new Set<(s: string) => void>();
  io.onStop = (fn) => {
    // node-io: a handler hears one signal, then is forgotten.
    const once = (s: string): void => {
      subscribed.delete(once);
      fn(s);
    };
    subscribed.add(once);
    return () => subscribed.delete(once);
  };
  const send = (s: string): boolean => {
    const [first] = subscribed;
    first?.(s);
    return first !== undefined;
  };
  return { io, send, subscribed };
}

describe('driveSession (one live process and a fleet alike)', () => {
  it('secondStop: the first stop subscribes again, once, so a second reaches the session; a third is the default', async () => {
    const { io, send } = stoppableIo();
    const s = session();
    const driving = driveSession(io, scenario, s, { secondStop: true, restoreOnCrash: false }, { quiet: true });
    expect(send('SIGINT')).toBe(true);
    expect(send('SIGINT')).toBe(true);
    expect(send('SIGINT')).toBe(false);
    expect(s.stops).toEqual(['SIGINT', 'SIGINT']);
    s.end();
    expect((await driving).signal).toBe('SIGINT');
  });

  it('without secondStop only the first stop reaches the session (no gateway behind: nothing to read at once)', async () => {
    const { io, send, subscribed } = stoppableIo();
    const s = session();
    const driving = driveSession(io, scenario, s, { secondStop: false, restoreOnCrash: false }, { quiet: true });
    expect(send('SIGTERM')).toBe(true);
    expect(send('SIGINT')).toBe(false);
    expect(s.stops).toEqual(['SIGTERM']);
    s.end();
    expect((await driving).signal).toBe('SIGTERM');
    expect(subscribed.size).toBe(0);
  });

  it('no progress line while the session is waiting (a fleet before its workers start), one at the end otherwise', async () => {
    const { io } = stoppableIo();
    const waiting = session(true);
    const a = driveSession(io, scenario, waiting, { secondStop: true, restoreOnCrash: false }, { ui: false });
    waiting.end();
    await a;
    expect(io.err).toBe('');
    const driving = session(false);
    driving.at(4000);
    const b = driveSession(io, scenario, driving, { secondStop: true, restoreOnCrash: false }, { ui: false });
    driving.end();
    await b;
    expect(io.err).toMatch(/^\[ {2}4\.0s\/10\.0s {2}40%\] /);
    expect(io.err.trim().split('\n')).toHaveLength(1);
  });

  it('liveResultFile: each variant with its wall time and rate, and the totals', () => {
    const result = { name: 'v', upstream: { attempts: 300 } } as unknown as Parameters<
      typeof liveResultFile
    >[1][number]['result'];
    const file = liveResultFile(scenario, [
      { name: 'a', result, wallMs: 1000 },
      { name: 'b', result, wallMs: 2000 },
    ]);
    expect(file.timing).toEqual({
      wallMs: 3000,
      attemptsPerSec: 200,
      variants: [
        { name: 'a', wallMs: 1000, attemptsPerSec: 300 },
        { name: 'b', wallMs: 2000, attemptsPerSec: 150 },
      ],
    });
    expect(file.mode).toBe('live');
  });
});
