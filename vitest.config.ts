import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The examples import orchd as a user of the package does; here that is the sources.
  resolve: { alias: { orchd: fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/each-file.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: end-to-end suites start servers and real clients; more forks only thrash.
    maxWorkers: 2,
  },
});
