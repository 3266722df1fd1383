/**
 * Temp folders for tests, the one place they are made and removed: in the run's own temp folder
 * (test/setup/global.ts gives the run a TMPDIR of its own), removed when the test that made one ends,
 * or, made outside a test (a describe body, beforeAll) or in a concurrent test, when its file's tests
 * have run (test/setup/each-file.ts). test/setup/global.ts checks that the run left nothing behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished, TestRunner } from 'vitest';

/** Made outside a (sequential) test: removed after the file's tests. */
const forTheFile = new Set<string>();

/**
 * A new empty folder under the temp folder, removed after the test (or the file) that made it.
 * until 'file': after the file's tests even when made in a test, for what outlives the test that
 * started it (a server or etcd a later afterAll stops).
 */
export function tempDir(prefix = 'orchd-test-', opts: { until?: 'test' | 'file' } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const test = TestRunner.getCurrentTest();
  // A concurrent test's "current test" may be another one by the time this runs: the file owns it.
  if (test && !test.concurrent && opts.until !== 'file') onTestFinished(() => removeDir(dir));
  else forTheFile.add(dir);
  return dir;
}

/** Removes a folder and all it holds (a folder already gone is fine). */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  forTheFile.delete(dir);
}

/** Removes the folders made for the file (test/setup/each-file.ts, after its tests). */
export function removeFileDirs(): void {
  for (const dir of [...forTheFile]) removeDir(dir);
}
