/**
 * reset() and a watcher that comes straight back: whatever the storage, a watch from a version
 * before the reset's end is 410 Expired (it never sees the reset's deletes), even when it arrives
 * while the reset's deletes are still being committed (a LevelDB batch of hundreds takes a while),
 * and only the watches at the new version count for watchers().
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOrchd, type Orchd } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';

const NAMESPACES = '/api/v1/namespaces';

async function createNamespaces(api: Orchd, n: number): Promise<void> {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, async (_, j) => {
        const res = await fetch(api.url + NAMESPACES, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${i + j}` } }),
        });
        expect(res.status).toBe(201);
      }),
    );
  }
}

/** The lines of a watch until it ends, or until ms have passed (then it is cut). */
async function watchLines(api: Orchd, rv: string | undefined, ms: number): Promise<any[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  let text = '';
  try {
    const res = await fetch(`${api.url}${NAMESPACES}?watch=1${rv === undefined ? '' : `&resourceVersion=${rv}`}`, { signal: abort.signal });
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe.each(['memory', 'leveldb'] as const)('reset() on %s: a watcher that resumes at once', (storage) => {
  it('gets 410 Expired and none of the deletes; a watch of the current state starts after the reset; only that one counts', async () => {
    const api = await startOrchd(storage === 'memory' ? { storage } : { dataDir: join(tempDir('orchd-reset-watch-'), 'data') });
    try {
      await createNamespaces(api, 300);
      const last = api.resourceVersion;
      // The moment the reset ends its watch, the watcher resumes from its last version, and another
      // client watches the current state.
      const comeBack = (async () => {
        const first = await watchLines(api, last, 10_000);
        expect(first.map((e) => e.type)).toEqual([]);
        return Promise.all([watchLines(api, last, 1500), watchLines(api, undefined, 1500)]);
      })();
      await api.watchers({ atLeast: 1 });
      const resetting = api.reset();
      await resetting;
      // Only the watch of the current state is open at the new version.
      expect(await api.watchers({ atLeast: 1 })).toBe(1);
      await expect(api.watchers({ atLeast: 2, timeoutMs: 200 })).rejects.toThrow(/1 of 2 watches open/);
      const [resumed, current] = await comeBack;
      expect(resumed.filter((e) => e.type === 'DELETED')).toHaveLength(0);
      expect(resumed.map((e) => [e.type, e.object.code, e.object.reason])).toEqual([['ERROR', 410, 'Expired']]);
      expect(current.filter((e) => e.type !== 'ADDED')).toEqual([]);
      expect(current.map((e) => e.object.metadata.name).filter((n: string) => n.startsWith('ns-'))).toEqual([]);
      expect(current.map((e) => e.object.metadata.name)).toContain('default');
      expect((await fetch(api.url + NAMESPACES + '/ns-0')).status).toBe(404);
    } finally {
      await api.stop();
    }
  });
});
