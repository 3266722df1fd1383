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
    // Four on two cores: the suite waits on servers, kubectl and etcd more than it computes (about
    // 380 s of CPU in 860 s of files' time), so four files overlap their waits; two left the cores
    // half idle (bench/RESULTS.md section 47).
    maxWorkers: 4,
    // A worker runs file after file with the modules it has loaded: a fresh process per file spent
    // most of the run's CPU loading src again (three times the CPU for the same files, measured on
    // test/cel, test/resources and test/admission). The files share no state through it: each starts
    // its own servers, temp folders (test/setup/each-file.ts) and clients, and stops them after.
    isolate: false,
  },
});
