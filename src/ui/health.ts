import type { Line, Tone } from './line.js';
import { seg } from './line.js';

/**
 * How healthy a figure is. The colour says it at a glance; the symbol and word say it without
 * colour (NO_COLOR, screen readers, pasted logs): ✓ healthy, ! degraded, ✗ failing.
 */
export type Health = 'good' | 'warn' | 'bad' | 'none';

export const HEALTH_SYMBOL: Record<Health, string> = { good: '✓', warn: '!', bad: '✗', none: '·' };
export const HEALTH_WORD: Record<Health, string> = { good: 'healthy', warn: 'degraded', bad: 'failing', none: 'idle' };

/**
 * What the upstream's health means for a variant: whether the retries reaching it stay near
 * one attempt per logical call. A variant can protect its upstream while its tasks fail (a
 * full outage with the engine): the two verdicts are said apart.
 */
export const UPSTREAM_WORD: Record<Health, string> = {
  good: 'protected',
  warn: 'strained',
  bad: 'stormed',
  none: 'idle',
};

export function tone(h: Health): Tone {
  return h === 'none' ? 'plain' : h;
}

/** Upstream attempts per logical leaf call: up to 1.5× healthy, above 2× failing (a storm). */
export function amplificationHealth(x: number): Health {
  if (!Number.isFinite(x) || x <= 0) return 'none';
  return x <= 1.5 ? 'good' : x <= 2 ? 'warn' : 'bad';
}

/** A success share: from 90 % healthy, from 50 % degraded, below failing. */
export function successHealth(share: number, finished = 1): Health {
  if (finished <= 0 || !Number.isFinite(share)) return 'none';
  return share >= 0.9 ? 'good' : share >= 0.5 ? 'warn' : 'bad';
}

/** An error share (429, 5xx, timeouts): up to 1 % healthy, up to 10 % degraded. */
export function errorShareHealth(share: number): Health {
  return share <= 0.01 ? 'good' : share <= 0.1 ? 'warn' : 'bad';
}

/** `✗ 27.0×`-style: the symbol then the text, both in the health's colour (no symbol for `none`). */
export function marked(text: string, h: Health): Line {
  return h === 'none' ? [seg(text)] : [seg(`${HEALTH_SYMBOL[h]} `, tone(h)), seg(text, tone(h))];
}
