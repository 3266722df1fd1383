import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import { TestEtcd } from '../helpers/etcd.js';
import { runLogContract } from './contract.js';

let etcd: TestEtcd;
const dirs: string[] = [];
let logs = 0;

beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);

afterAll(async () => {
  await etcd?.destroy();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** Each log under a prefix of its own on the one etcd: the other logs' revisions are holes in its seqs. */
async function newEtcdLog(prefix: string, dir: string): Promise<EtcdLog> {
  const log = new EtcdLog({ servers: [etcd.url], prefix, dir });
  await log.open();
  return log;
}

const where = new WeakMap<EtcdLog, { prefix: string; dir: string }>();

runLogContract({
  name: 'EtcdLog',
  newLog: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orchd-etcd-log-'));
    dirs.push(dir);
    const at = { prefix: `/contract-${++logs}/`, dir };
    const log = await newEtcdLog(at.prefix, at.dir);
    where.set(log, at);
    return log;
  },
  reopen: async (log) => {
    const at = where.get(log)!;
    await log.close();
    const next = await newEtcdLog(at.prefix, at.dir);
    where.set(next, at);
    return next;
  },
  skip: {
    breakStorage: 'etcd does not break: each append is its own transaction, and one etcd did not take fails alone (CONFLICT or UNAVAILABLE: test/log/etcd-log-writers.test.ts)',
    dense:
      "a shared log's seqs are etcd revisions (holes: other keys take revisions too) and each write is its own transaction (no batches); counting, batching and compaction by seq are covered with holes in test/log/etcd-log-writers.test.ts",
  },
});
