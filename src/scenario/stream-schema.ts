import { z } from 'zod';
import type { TargetEngineConfig } from '../traffic/config.js';
import { COMMIT_POLICIES } from '../engine/engine-profiles.js';
import type { StreamLimits } from '../traffic/stream-limits.js';
import { bool, duration, expecting, obj, oneOf } from './schema-kit.js';

/**
 * `engine.stream`: the stream guard's limits, commit policy and resumption, `{firstToken: 5s,
 * idle: 10s, headers: 10s, commit: first-token, resume: true}` (each optional; the profile's by default).
 */
export function streamLimitsSchema(): z.ZodType<Partial<StreamLimits>> {
  return obj(
    {
      firstToken: duration({ positive: true }).optional(),
      idle: duration({ positive: true }).optional(),
      headers: duration({ positive: true }).optional(),
      commit: oneOf(COMMIT_POLICIES as unknown as readonly ['first-token', 'complete']).optional(),
      resume: bool().optional(),
    },
    'a mapping like {firstToken: 5s, idle: 10s, headers: 10s, commit: first-token, resume: true}',
  ).transform((s) => ({
    ...(s.commit === undefined ? {} : { commit: s.commit }),
    ...(s.resume === undefined ? {} : { resume: s.resume }),
    ...(s.firstToken === undefined ? {} : { firstTokenMs: s.firstToken }),
    ...(s.idle === undefined ? {} : { idleMs: s.idle }),
    ...(s.headers === undefined ? {} : { headersMs: s.headers }),
  }));
}

/**
 * `engine.targets`: per model, the stream limits of calls to it over the engine's,
 * `{o3: {stream: {firstToken: 120s}}, gpt-4o-mini: {stream: {firstToken: 10s, idle: 5s}}}`.
 * The commit policy is the guard's, not a target's.
 */
export function targetsSchema(): z.ZodType<Record<string, TargetEngineConfig>> {
  const target = obj(
    {
      stream: obj(
        {
          firstToken: duration({ positive: true }).optional(),
          idle: duration({ positive: true }).optional(),
          headers: duration({ positive: true }).optional(),
        },
        'a mapping like {firstToken: 120s, idle: 30s, headers: 10s}',
      ).optional(),
    },
    'a mapping like {stream: {firstToken: 120s}}',
  ).transform((t): TargetEngineConfig => {
    const s = t.stream;
    if (s === undefined) return {};
    return {
      stream: {
        ...(s.firstToken === undefined ? {} : { firstTokenMs: s.firstToken }),
        ...(s.idle === undefined ? {} : { idleMs: s.idle }),
        ...(s.headers === undefined ? {} : { headersMs: s.headers }),
      },
    };
  });
  return z.record(z.string(), target, { error: expecting('a mapping of model names to target settings') });
}
