import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../src/engine/manual-clock.js';
import { main } from '../examples/guard-openai-call.js';
import { drive } from './helpers/drive.js';

describe('examples', () => {
  it('the README engine example is examples/guard-openai-call.ts, verbatim', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/guard-openai-call.ts', import.meta.url), 'utf8');
    expect(readme).toContain(example.trim());
  });

  it('guard-openai-call retries the 429s, honouring retry-after-ms, and answers', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const clock = new ManualClock(0);
    const r = await drive(clock, main(clock));
    log.mockRestore();
    expect(r).toMatchObject({ ok: true, attempts: 3, target: 'gpt-4o', degraded: false });
    expect(r.value.choices[0].message.content).toBe('Paris.');
    expect(clock.now()).toBeGreaterThanOrEqual(400);
  });
});
