import type { z } from 'zod';
import { COMMIT_POLICIES } from '../engine/engine-profiles.js';
import type { StreamLimits } from '../traffic/stream-limits.js';
import { duration, obj, oneOf } from './schema-kit.js';

/**
 * `engine.stream`: the stream guard's limits and commit policy, `{firstToken: 5s, idle: 10s,
 * headers: 10s, commit: first-token}` (each optional; the profile's by default).
 */
export function streamLimitsSchema(): z.ZodType<Partial<StreamLimits>> {
  return obj(
    {
      firstToken: duration({ positive: true }).optional(),
      idle: duration({ positive: true }).optional(),
      headers: duration({ positive: true }).optional(),
      commit: oneOf(COMMIT_POLICIES as unknown as readonly ['first-token', 'complete']).optional(),
    },
    'a mapping like {firstToken: 5s, idle: 10s, headers: 10s, commit: first-token}',
  ).transform((s) => ({
    ...(s.commit === undefined ? {} : { commit: s.commit }),
    ...(s.firstToken === undefined ? {} : { firstTokenMs: s.firstToken }),
    ...(s.idle === undefined ? {} : { idleMs: s.idle }),
    ...(s.headers === undefined ? {} : { headersMs: s.headers }),
  }));
}
