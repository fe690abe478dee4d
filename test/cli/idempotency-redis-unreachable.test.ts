import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from './capture-io.js';

// The real process (dist/, built by test/global-setup.ts): what ioredis prints goes to the process's stderr.
const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));

/** A port nothing listens on: a server's, once it closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('--set idempotency=redis with no Redis there', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('exits 2 with one line naming the address and why, and nothing from ioredis', async () => {
    const port = await closedPort();
    const r = spawnSync(
      process.execPath,
      [BIN, 'run', 'side-effects', '--mode', 'live', '--set', 'idempotency=redis', '-q'],
      {
        cwd: tempDir(),
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1', REDIS_URL: `redis://127.0.0.1:${port}` },
        timeout: 60_000,
      },
    );
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `stormlab: side-effects: idempotency: redis, but no Redis answers at redis://127.0.0.1:${port} (ECONNREFUSED); set REDIS_URL\n`,
    );
    expect(r.stdout).toBe('');
  });
});
