/**
 * A put on a log with one writer is final once appended (its version stamped), so its JSON is made
 * while the batch is written: the write's answer carries it with no watcher to make it, and the
 * change the watchers get holds the very same bytes (serialize once).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { Change } from '../../src/store/change.js';
import type { Store } from '../../src/store/store.js';
import { tempStore } from '../helpers/temp-store.js';

let log: LevelDbLog;
let store: Store;
beforeAll(async () => {
  ({ log, store } = await tempStore('orchd-early-json-'));
});
afterAll(async () => {
  await store?.close();
  await log?.close();
});

const thing = (name: string, n: number) => ({ apiVersion: 'test.orch.io/v1', kind: 'Thing', metadata: { name }, spec: { n } });

test("a put's answer is its JSON, the bytes its change gives watchers, with the version it was written at", async () => {
  const changes: Change[] = [];
  const sub = store.changes$.subscribe((batch) => changes.push(...batch));
  try {
    const stored = await store.put('test.orch.io/things/a', thing('a', 1), 'absent');
    expect(stored.json).toBeInstanceOf(Buffer);
    const answered = JSON.parse(stored.json!.toString()) as { metadata: { resourceVersion: string } };
    expect(answered).toEqual({ ...thing('a', 1), metadata: { name: 'a', resourceVersion: String(stored.seq) } });
    const change = changes.find((c) => c.seq === stored.seq)!;
    expect(change.encodedJson).toBe(stored.json);
  } finally {
    sub.unsubscribe();
  }
});

test('concurrent puts of one batch each answer with their own JSON; a refused put answers nothing', async () => {
  const puts = Array.from({ length: 20 }, (_, i) => store.put(`test.orch.io/things/b${i}`, thing(`b${i}`, i), 'absent'));
  const again = expect(store.put('test.orch.io/things/b0', thing('b0', 99), 'absent')).rejects.toThrow();
  const stored = await Promise.all(puts);
  await again;
  for (const [i, s] of stored.entries()) {
    expect(JSON.parse(s.json!.toString())).toEqual({ ...thing(`b${i}`, i), metadata: { name: `b${i}`, resourceVersion: String(s.seq) } });
  }
});
