import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { firstValueFrom } from 'rxjs';
import { decodeEntry, encodeRecord } from '../../src/log/codec.js';
import { encryptAtRest } from '../../src/log/encryption/index.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { Author } from '../../src/log/log.js';
import { tempDir } from '../helpers/temp.js';

/*
 * Each entry's writer (user, field manager, verb, subresource) is kept with it, read back with it,
 * and sealed with it under encryption at rest: who wrote an object is as private as the object.
 */

const folder = async () => join(tempDir('orchd-writer-', { until: 'file' }), 'log');

const alice: Author = { user: 'alice@example.com', verb: 'update', subresource: 'status', manager: 'rollout-bot' };
const obj = (name: string) => ({ metadata: { name } });

describe('the writer of an entry', () => {
  it('round-trips through the record bytes, beside one written without a writer', () => {
    const withWriter = decodeEntry(7, encodeRecord({ type: 'put', key: '/namespaces//a', value: obj('a'), writer: alice }));
    expect([withWriter.seq, withWriter.type, withWriter.key, (withWriter.value as ReturnType<typeof obj>).metadata.name, withWriter.writer]).toEqual([7, 'put', '/namespaces//a', 'a', alice]);
    expect(decodeEntry(8, encodeRecord({ type: 'delete', key: '/namespaces//b', value: obj('b') })).writer).toBeUndefined();
  });

  it('is committed, stored and read back by a LevelDB log, after a restart too', async () => {
    const path = await folder();
    const log = new LevelDbLog({ path });
    await log.open();
    const committed = firstValueFrom(log.committed$);
    const seq = await log.append({ type: 'put', key: '/namespaces//a', value: obj('a'), writer: alice }).durable;
    expect((await committed)[0].writer).toEqual(alice);
    await log.close();
    const again = new LevelDbLog({ path });
    await again.open();
    try {
      expect((await again.get(seq))?.writer).toEqual(alice);
    } finally {
      await again.close();
    }
  });

  it('is sealed with the value under encryption at rest: not on disk in the clear, opened when read', async () => {
    const path = await folder();
    const config = { resources: [{ resources: [{ group: '*', resource: '*' }], providers: [{ type: 'aesgcm' as const, keys: [{ name: 'k', secret: randomBytes(32) }] }] }] };
    const log = encryptAtRest(new LevelDbLog({ path }), config);
    await log.open();
    const seq = await log.append({ type: 'put', key: '/namespaces//a', value: obj('a'), writer: alice }).durable;
    await log.close();
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const stored = await db.values({ lt: Buffer.from([0xff]) }).all();
    await db.close();
    expect(stored).toHaveLength(1);
    expect(stored[0].includes('alice')).toBe(false);
    expect(stored[0].includes('rollout-bot')).toBe(false);
    const reopened = encryptAtRest(new LevelDbLog({ path }), config);
    await reopened.open();
    try {
      expect((await reopened.get(seq))?.writer).toEqual(alice);
    } finally {
      await reopened.close();
    }
    // Without the key, the writer stays sealed bytes, never a made-up writer.
    const plain = new LevelDbLog({ path });
    await plain.open();
    try {
      expect((await plain.get(seq))?.writer).toBeInstanceOf(Uint8Array);
    } finally {
      await plain.close();
    }
  });
});
