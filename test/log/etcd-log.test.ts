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
    const dir = await mkdtemp(join(tmpdir(), 'orchd-etcd-log-'));
    dirs.push(dir);
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
