import { describe, expect, it } from 'vitest';
import { colorWanted } from '../../src/cli/color-wanted.js';
import { cli, tempDir } from './capture-io.js';

describe('colorWanted', () => {
  it('colours a TTY, not a pipe, unless FORCE_COLOR says so; NO_COLOR always wins', () => {
    expect(colorWanted({ isTTY: true, env: {} })).toBe(true);
    expect(colorWanted({ isTTY: false, env: {} })).toBe(false);
    expect(colorWanted({ isTTY: false, env: { FORCE_COLOR: '1' } })).toBe(true);
    expect(colorWanted({ isTTY: false, env: { FORCE_COLOR: '' } })).toBe(true);
    expect(colorWanted({ isTTY: true, env: { FORCE_COLOR: '0' } })).toBe(false);
    expect(colorWanted({ isTTY: true, env: { FORCE_COLOR: 'false' } })).toBe(false);
    expect(colorWanted({ isTTY: false, env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).toBe(false);
    expect(colorWanted({ isTTY: true, env: { NO_COLOR: '' } })).toBe(false);
  });

  it('a piped run writes escapes with FORCE_COLOR, none without or with NO_COLOR too', async () => {
    const dir = tempDir();
    const run = (env: Record<string, string>) => cli(['run', 'retry-storm', '--duration', '5s'], { cwd: dir, env });
    const forced = await run({ FORCE_COLOR: '1' });
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toMatch(/\u001b\[/);
    expect((await run({})).out).not.toMatch(/\u001b\[/);
    expect((await run({ FORCE_COLOR: '1', NO_COLOR: '1' })).out).not.toMatch(/\u001b\[/);
  });
});
