import { afterAll, beforeAll } from 'vitest';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import { TestEtcd } from '../helpers/etcd.js';
import { runLogContract } from './contract.js';
import { tempDir } from '../helpers/temp.js';

let etcd: TestEtcd;
let logs = 0;

beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);

afterAll(async () => {
  await etcd?.destroy();
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
    const dir = tempDir('orchd-etcd-log-', { until: 'file' });
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
