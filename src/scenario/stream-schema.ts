import type { z } from 'zod';
import { COMMIT_POLICIES } from '../engine/engine-profiles.js';
import type { StreamLimits } from '../traffic/stream-limits.js';
import { bool, duration, obj, oneOf } from './schema-kit.js';

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
