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

/** Each log under a prefix of its own on the one etcd (tests run one at a time, so no log sees another's revisions). */
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
    const at = { prefix: `contract-${++logs}/`, dir };
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
    breakStorage:
      'etcd does not break: an append etcd did not take fails alone (RACED, CONFLICT or UNAVAILABLE) and its successors, whose transactions name the revision before them, cannot commit on top of it (test/log/etcd-log-writers.test.ts)',
  },
});
