import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Two projects, both run by `vitest run` (and so by `npm test` and CI):
 * - `unit`: deterministic by construction (virtual or manual clocks, seeded randomness);
 * - `slow`: `*.slow.test.ts`, the few tests that need real time or a real heap — real SDKs
 *   timing a retry-after wait, sim and live runs on the real clock agreeing, memory staying
 *   flat (with `--expose-gc`, so garbage is collected before each reading). Run it alone with
 *   `npx vitest run --project slow`.
 */
const SLOW = ['test/**/*.slow.test.ts'];

export default defineConfig({
  // Examples import the package by name, as users do; in tests that name is the source.
  resolve: {
    alias: {
      'stormlab/engine': fileURLToPath(new URL('./src/entry/engine.ts', import.meta.url)),
      'stormlab/undici': fileURLToPath(new URL('./src/entry/undici.ts', import.meta.url)),
      'stormlab/redis': fileURLToPath(new URL('./src/entry/redis.ts', import.meta.url)),
      'stormlab/prometheus': fileURLToPath(new URL('./src/entry/prometheus.ts', import.meta.url)),
      'stormlab/fake-upstream': fileURLToPath(new URL('./src/entry/fake-upstream.ts', import.meta.url)),
    },
  },
  test: {
    setupFiles: ['test/setup.ts'],
    environment: 'node',
    // Builds dist/ when missing or stale: test/cli/bin.test.ts runs the real bin/stormlab.js.
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts', 'test/**/*.test.tsx'], exclude: SLOW },
      },
      {
        extends: true,
        // One file at a time: their timings are of this process, not of its neighbours.
        test: { name: 'slow', include: SLOW, execArgv: ['--expose-gc'], fileParallelism: false },
      },
    ],
  },
});
