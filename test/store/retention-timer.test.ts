import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { KubeObject } from '../../src/api/types.js';
import { RetentionTimer } from '../../src/store/retention-timer.js';
import { getAt } from '../../src/store/list.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/temp.js';

const open: { store: Store; log: LevelDbLog }[] = [];

afterEach(async () => {
  for (const { store, log } of open.splice(0)) {
    await store.close();
    await log.close();
  }
});

async function start(dir: string, now: () => number) {
  const log = new LevelDbLog({ path: join(dir, 'log') });
  await log.open();
  const store = new Store({ log, now });
  await store.start();
  open.push({ store, log });
  return { store, log };
}

const obj = (name: string, v: number): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, labels: { v: String(v) } } });

describe('compaction by age', () => {
  it('drops versions applied before the age limit, keeps the state at the horizon, and survives a restart', async () => {
    const dir = tempDir('orchd-compactor-');
    let t = 0;
    const { store, log } = await start(dir, () => t);
    await store.put('g/x//a', obj('a', 1), 'absent');
    await store.put('g/x//b', obj('b', 1), 'absent');
    t = 10_000;
    const a2 = await store.put('g/x//a', { ...obj('a', 2) }, 'any');
    t = 20_000;
    await store.put('g/x//c', obj('c', 1), 'absent');
    const compactor = new RetentionTimer(store, { policy: { maxAgeMs: 15_000 } });
    // At t=20s, versions applied by t=5s (seqs 1, 2) are older than 15s: the horizon is 3.
    const done = await compactor.runOnce();
    expect(done?.horizon).toBe(3);
    expect(log.firstSeq).toBe(3);
    expect(store.oldestVersion).toBe(2);
    // The state at 2 needs a@1 and b@2: both kept though below the horizon.
    expect((await getAt(store, 'g/x//a', 2))?.obj.metadata.labels).toEqual({ v: '1' });
    expect((await getAt(store, 'g/x//b', 2))?.seq).toBe(2);
    await expect(getAt(store, 'g/x//a', 1)).rejects.toMatchObject({ code: 'COMPACTED' });
    expect(a2.seq).toBe(3);
    // Nothing older than 15s after that: a second pass does nothing.
    expect(await compactor.runOnce()).toBeUndefined();

    await store.close();
    await log.close();
    open.length = 0;
    const again = await start(dir, () => t);
    expect(Array.from(again.store.view.objects(), (s) => s.key).sort()).toEqual(['g/x//a', 'g/x//b', 'g/x//c']);
    expect((await getAt(again.store, 'g/x//a', 2))?.obj.metadata.labels).toEqual({ v: '1' });
  });
});
