import type { z } from 'zod';
import type { StreamLimits } from '../traffic/stream-limits.js';
import { duration, obj } from './schema-kit.js';

/** `engine.stream`: the stream guard's limits, `{firstToken: 5s, idle: 10s, headers: 10s}` (each optional). */
export function streamLimitsSchema(): z.ZodType<Partial<StreamLimits>> {
  return obj(
    {
      firstToken: duration({ positive: true }).optional(),
      idle: duration({ positive: true }).optional(),
      headers: duration({ positive: true }).optional(),
    },
    'a mapping like {firstToken: 5s, idle: 10s, headers: 10s}',
  ).transform((s) => ({
    ...(s.firstToken === undefined ? {} : { firstTokenMs: s.firstToken }),
    ...(s.idle === undefined ? {} : { idleMs: s.idle }),
    ...(s.headers === undefined ? {} : { headersMs: s.headers }),
  }));
}
