import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeRecord } from '../../src/log/codec.js';
import { rewriteEncryption } from '../../src/cli/rewrite-encryption.js';
import { call } from '../helpers/server.js';
import { configOf, create, diskBytes, dropCheckpoint, entryPrefixes, event, eventsConfig, EVENTS, keyed, marker, onDisk, secret, start } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

describe.each([
  ['aesgcm', keyed('aesgcm', ['key1', secret(16)])],
  ['secretbox', keyed('secretbox', ['key1', secret()])],
  ['aescbc', keyed('aescbc', ['key1', secret()])],
])('%s at rest', (type, providers) => {
  it('keeps no plaintext of encrypted events on disk, keeps unselected namespaces plain, and decrypts after a restart', async () => {
    const dataDir = tempDir();
    const config = await configOf(eventsConfig(providers));
    const ev = marker();
    const ns = marker();
    let s = await start(dataDir, config);
    try {
      await create(s.url, 'e1', ev);
      const n = await call(s.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'plain', annotations: { marker: ns } } });
      expect(n.status).toBe(201);
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).body.metadata.annotations.marker).toBe(ev);
      // The writes are synced: the log on disk already holds them.
      expect(await onDisk(dataDir, ev)).toBe(false);
      expect(await onDisk(dataDir, ns)).toBe(true);
      expect(await onDisk(dataDir, `orch:enc:${type}:v1:key1:`)).toBe(true);
    } finally {
      await s.close();
    }
    // The checkpoint written at close is sealed per object too.
    expect(await onDisk(dataDir, ev)).toBe(false);
    expect(await onDisk(dataDir, ns)).toBe(true);
    s = await start(dataDir, config);
    try {
      const got = await call(s.url, 'GET', `${EVENTS}/e1`);
      expect(got.status).toBe(200);
      expect(got.body.note).toBe(`note ${ev}`);
      const list = await call(s.url, 'GET', EVENTS);
      expect(list.body.items.map((i: any) => i.metadata.annotations.marker)).toEqual([ev]);
    } finally {
      await s.close();
    }
  });
});

describe('key rotation', () => {
  it('reads entries of the old key, writes with the new first key, and after the rewrite tool the old key can go', async () => {
    const dataDir = tempDir();
    const k1 = keyed('aesgcm', ['key1', secret()]);
    const k2 = keyed('secretbox', ['key2', secret()]);
    const m1 = marker();
    const m2 = marker();
    let s = await start(dataDir, await configOf(eventsConfig(k1)));
    try {
      await create(s.url, 'e1', m1);
    } finally {
      await s.close();
    }
    const both = await configOf(eventsConfig(k2 + k1));
    s = await start(dataDir, both);
    try {
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).body.metadata.annotations.marker).toBe(m1);
      const before = await diskBytes(dataDir);
      await create(s.url, 'e2', m2);
      const after = await diskBytes(dataDir);
      const count = (b: Buffer, t: string) => b.toString('latin1').split(t).length - 1;
      // The new write went out under the new first key, not the old one.
      expect(count(after, 'orch:enc:secretbox:v1:key2:')).toBeGreaterThan(count(before, 'orch:enc:secretbox:v1:key2:'));
      expect(count(after, 'orch:enc:aesgcm:v1:key1:')).toBe(count(before, 'orch:enc:aesgcm:v1:key1:'));
    } finally {
      await s.close();
    }
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:aesgcm:v1:key1:', 'orch:enc:secretbox:v1:key2:']);
    // Without the rewrite the log entry of e1 is still under the old key: a start that replays the
    // log (no checkpoint, which is sealed whole with the new key) cannot read it without that key.
    const onlyNew = await configOf(eventsConfig(k2));
    const copy = tempDir();
    await cp(dataDir, copy, { recursive: true });
    await dropCheckpoint(copy);
    s = await start(copy, onlyNew);
    try {
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(500);
    } finally {
      await s.close();
    }

    const result = await rewriteEncryption({ dataDir, config: both.encryption!.value });
    expect(result.corrupt).toEqual([]);
    expect(result.rewritten).toBeGreaterThanOrEqual(2);
    // The rewrite put every object under the new key and compacted the old entries away.
    expect(await entryPrefixes(dataDir)).toEqual(['orch:enc:secretbox:v1:key2:']);
    // Gone from the files too, not only from the log's keys: LevelDB compacted the range.
    expect(await onDisk(dataDir, 'orch:enc:aesgcm:v1:key1:')).toBe(false);
    s = await start(dataDir, onlyNew);
    try {
      const list = await call(s.url, 'GET', EVENTS);
      expect(list.status, list.text).toBe(200);
      expect(list.body.items.map((i: any) => i.metadata.annotations.marker)).toEqual([m1, m2]);
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('rewrite-encryption of a plaintext log', () => {
  it('leaves no plaintext in any file of the data folder', async () => {
    const dataDir = tempDir();
    const m = marker();
    let s = await start(dataDir);
    try {
      await create(s.url, 'e1', m);
    } finally {
      await s.close();
    }
    expect(await onDisk(dataDir, m)).toBe(true);
    const config = await configOf(eventsConfig(keyed('aesgcm', ['key1', secret()])));
    const result = await rewriteEncryption({ dataDir, config: config.encryption!.value });
    expect(result.corrupt).toEqual([]);
    expect(await onDisk(dataDir, m)).toBe(false);
    s = await start(dataDir, config);
    try {
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).body.metadata.annotations.marker).toBe(m);
    } finally {
      await s.close();
    }
  });
});

describe('corrupt objects', () => {
  it('a removed key: reads and writes answer corrupt-object errors, the unsafe delete removes them', async () => {
    const dataDir = tempDir();
    let s = await start(dataDir, await configOf(eventsConfig(keyed('aesgcm', ['key1', secret()]))));
    try {
      await create(s.url, 'e1', marker(), { finalizers: ['orch.io/hold'] });
      await create(s.url, 'e2', marker());
    } finally {
      await s.close();
    }
    const other = await configOf(eventsConfig(keyed('aesgcm', ['keyX', secret()])));
    s = await start(dataDir, other);
    try {
      const get = await call(s.url, 'GET', `${EVENTS}/e1`);
      expect(get.status).toBe(500);
      expect(get.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
      expect(get.body.message).toContain('Internal error occurred: StorageError: corrupt object, Code: 7, Key: events.orch.io/events/default/e1');
      expect(get.body.message).toContain('data from the storage is not transformable revision=');
      expect(get.body.message).toContain('no matching prefix found');

      const list = await call(s.url, 'GET', EVENTS);
      expect(list.status).toBe(500);
      expect(list.body).toMatchObject({
        reason: 'StorageReadError',
        message: 'failed to read one or more events.events.orch.io from the storage',
        details: { group: 'events.orch.io', kind: 'events' },
      });
      expect(list.body.details.causes.map((c: any) => [c.reason, c.field])).toEqual([
        ['UnexpectedServerResponse', 'events.orch.io/events/default/e1'],
        ['UnexpectedServerResponse', 'events.orch.io/events/default/e2'],
      ]);
      // Other resources are untouched.
      expect((await call(s.url, 'GET', '/api/v1/namespaces/default')).status).toBe(200);

      expect((await call(s.url, 'PUT', `${EVENTS}/e1`, event('e1', 'x'))).status).toBe(500);
      expect((await call(s.url, 'PATCH', `${EVENTS}/e1`, { metadata: { labels: { a: 'b' } } }, { 'Content-Type': 'application/merge-patch+json' })).status).toBe(500);
      expect((await call(s.url, 'POST', EVENTS, event('e1', 'x'))).body.reason).toBe('AlreadyExists');
      const plain = await call(s.url, 'DELETE', `${EVENTS}/e1`);
      expect(plain.status).toBe(500);
      expect(plain.body.message).toContain('corrupt object');
      const dry = await call(s.url, 'DELETE', `${EVENTS}/e1?ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=All`);
      expect(dry.status).toBe(422);
      expect(dry.body.message).toContain('ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun');

      // The finalizer does not hold an unsafe delete.
      const unsafe = await call(s.url, 'DELETE', `${EVENTS}/e1?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
      expect(unsafe.status, unsafe.text).toBe(200);
      expect(unsafe.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'e1', group: 'events.orch.io', kind: 'events' } });
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(404);
    } finally {
      await s.close();
    }
    // Across a restart (and its checkpoint) e2 is still corrupt, e1 still gone.
    s = await start(dataDir, other);
    try {
      expect((await call(s.url, 'GET', `${EVENTS}/e1`)).status).toBe(404);
      expect((await call(s.url, 'GET', `${EVENTS}/e2`)).status).toBe(500);
      // DeleteOptions in the body work as well.
      const unsafe = await call(s.url, 'DELETE', `${EVENTS}/e2`, { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true });
      expect(unsafe.status, unsafe.text).toBe(200);
      const list = await call(s.url, 'GET', EVENTS);
      expect(list.status).toBe(200);
      expect(list.body.items).toEqual([]);
      // The name is free again.
      await create(s.url, 'e2', marker());
    } finally {
      await s.close();
    }
  });

  it('garbled and cut-short ciphertext is reported as corrupt, never a crash', async () => {
    const dataDir = tempDir();
    const config = await configOf(eventsConfig(keyed('aesgcm', ['key1', secret()])));
    let s = await start(dataDir, config);
    try {
      for (const n of ['garbled', 'short', 'fine']) await create(s.url, n, marker());
    } finally {
      await s.close();
    }
    const db = new Level<Buffer, Buffer>(join(dataDir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      // Without the checkpoint the start replays the log, whose entries are damaged here.
      await dropCheckpoint(dataDir);
      for await (const [k, v] of db.iterator({ lt: Buffer.from([0xff]) })) {
        const e = decodeEntry(0, v);
        const sealed = e.value as Buffer;
        if (e.key.endsWith('/garbled')) {
          const bad = Buffer.from(sealed);
          bad[bad.length - 20] ^= 0xff;
          await db.put(k, encodeRecord({ type: e.type, key: e.key, value: bad }));
        } else if (e.key.endsWith('/short')) {
          await db.put(k, encodeRecord({ type: e.type, key: e.key, value: sealed.subarray(0, sealed.indexOf(':key1:') + 6 + 3) }));
        }
      }
    } finally {
      await db.close();
    }
    s = await start(dataDir, config);
    try {
      const garbled = await call(s.url, 'GET', `${EVENTS}/garbled`);
      expect(garbled.status).toBe(500);
      expect(garbled.body.message).toContain('cipher: message authentication failed');
      const short = await call(s.url, 'GET', `${EVENTS}/short`);
      expect(short.status).toBe(500);
      expect(short.body.message).toContain('shorter than the required size');
      expect((await call(s.url, 'GET', `${EVENTS}/fine`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
