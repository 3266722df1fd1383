/**
 * The log is the truth: whatever happened to the checkpoint, a restart on a compacted log rebuilds
 * the current state from the entries compaction kept plus everything after the horizon.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { KubeObject } from '../../src/resources/types.js';
import { Store } from '../../src/store/store.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function open(path: string) {
  const log = new LevelDbLog({ path });
  await log.open();
  const store = new Store({ log });
  await store.start();
  cleanup.push(async () => {
    await store.close();
    await log.close();
  });
  return { log, store };
}

const obj = (name: string, v: number): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, labels: { v: String(v) } } });
const state = (store: Store) => [...store.view.objects()].map((s) => [s.key, s.seq, s.obj.metadata.labels?.v]).sort();

describe('restart after compaction', () => {
  it('rebuilds the current state from the log alone when the checkpoint is not usable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orchd-restart-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'log');
    const first = await open(path);
    await first.store.put('g/x//a', obj('a', 1), 'absent');
    await first.store.put('g/x//b', obj('b', 1), 'absent');
    await first.store.update('g/x//a', async () => ({ kind: 'put', obj: obj('a', 2) }));
    await first.store.update('g/x//b', async () => ({ kind: 'delete', obj: obj('b', 1) }));
    await first.store.put('g/x//c', obj('c', 1), 'absent');
    await first.store.compact(first.log.lastSeq + 1);
    expect(first.log.firstSeq).toBeGreaterThan(2);
    const before = state(first.store);
    // A checkpoint this code cannot read (another format, or sealed with a key that is gone).
    await first.log.saveCheckpoint({
      seq: first.log.lastSeq,
      parts: (async function* () {
        yield [Buffer.from('not a checkpoint')];
      })(),
    });
    await cleanup.pop()!();

    const second = await open(path);
    expect(state(second.store)).toEqual(before);
    expect(before.map((r) => r[0])).toEqual(['g/x//a', 'g/x//c']);
    expect(second.store.appliedSeq).toBe(second.log.lastSeq);
  });
});
