import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ESC = '\x1b';

function tmux(args: string[], timeout = 30_000) {
  const r = spawnSync('tmux', args, { encoding: 'utf8', timeout });
  if (r.error !== undefined) throw r.error;
  return r;
}

describe('the dashboard in a real terminal', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('shows the storm and its taming in the last frame of `compare retry-storm`, then the summary', () => {
    const session = `stormlab-test-${process.pid}`;
    const signal = `${session}-done`;
    // The CLI runs in a pseudo-terminal of 100×32; when it ends it signals, and the pane stays for capture.
    const command = `cd ${JSON.stringify(ROOT)} && CI= NO_COLOR=1 node bin/stormlab.js compare retry-storm --speed max; tmux wait-for -S ${signal}; sleep 600`;
    expect(tmux(['new-session', '-d', '-s', session, '-x', '100', '-y', '32', command]).status).toBe(0);
    try {
      expect(tmux(['wait-for', signal], 60_000).status).toBe(0);
      const screen = tmux(['capture-pane', '-p', '-J', '-S', '-300', '-t', session]).stdout;
      // The dashboard's last frame: header, side-by-side headline, both variants' panels.
      expect(screen).toContain('stormlab retry-storm · sim · seed 1');
      expect(screen).toMatch(/amplification naive ✗ 27\.0× .*· engine ✓ 0\.\d+×/);
      expect(screen).toMatch(/── naive · ✗ upstream · ✗ tasks · done ─+ +── engine · ✓ upstream · ✗ tasks/);
      expect(screen).toContain('now outage 503');
      // The engine's breaker at the top layer: open, or half-open waiting for a probe once arrivals stop.
      expect(screen).toMatch(/orchestrator +\S+ +\S+ % (open|half-open)/);
      // Then the summary table, after the dashboard handed the terminal back.
      expect(screen).toMatch(/^amplification naive 27\.0× · engine 0\.\d+×$/m);
      expect(screen).toMatch(/retry-storm · seed 1 · sim · .* upstream attempts\/s/);
      expect(screen).not.toContain(ESC);
    } finally {
      tmux(['kill-session', '-t', session]);
    }
  });

  it('prints plain progress lines and the summary, no escape codes, when stdout is not a terminal', () => {
    const r = spawnSync(process.execPath, ['bin/stormlab.js', 'compare', 'retry-storm'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CI: '' },
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(ESC);
    const progress = r.stderr.trimEnd().split('\n');
    expect(progress.length).toBeGreaterThanOrEqual(5);
    for (const line of progress) expect(line).toMatch(/^\[ *[\d.]+m?s\/60\.0s +\d+%\] naive [\d.]+× .* \| engine /);
    expect(progress.at(-1)).toMatch(/· done$/);
    expect(r.stdout).toMatch(/^amplification naive 27\.0× · engine 0\.\d+×\n/);
  });
});
