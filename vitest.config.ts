import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    environment: 'node',
    // Builds dist/ when missing or stale: test/cli/bin.test.ts runs the real bin/stormlab.js.
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 20_000,
  },
});
