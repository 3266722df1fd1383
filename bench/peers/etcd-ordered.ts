/**
 * What a writer that keeps order gets from etcd: transactions that each name the revision before
 * their own (the check every orchd append makes, src/log/etcd/appends.ts, so that a record's
 * revision is the resourceVersion stamped into it), with no API server around them. One in flight is
 * the ceiling of orchd's appends through one replica; several in flight is the pipeline that etcd's
 * order of applying concurrent requests defeats (a transaction applied before its predecessor fails
 * its check and is sent again once the predecessor is in).
 */
import { CompareResult, CompareTarget, type Etcd3 } from 'etcd3';
import { closedLoop, type Bounds, type RunResult, type Watched } from '../load.js';

export interface OrderedResult {
  run: RunResult;
  /** Transactions sent again because etcd applied them before their predecessor. */
  resent: number;
}

export async function orderedTxns(client: Etcd3, prefix: string, inFlight: number, bounds: Bounds, value: (i: number) => Buffer, watched: Watched): Promise<OrderedResult> {
  const log = Buffer.from(`${prefix}log`);
  const first = await client.kv.txn({ success: [{ request_put: { key: log, value: Buffer.alloc(0) } }] });
  let next = Number(first.header.revision) + 1;
  // revision → settles once the transaction of ours meant for it was answered: true if it took it.
  const landed = new Map<number, { promise: Promise<boolean>; resolve: (took: boolean) => void }>();
  const slot = (rev: number) => {
    let s = landed.get(rev);
    if (!s) {
      let resolve: (took: boolean) => void = () => {};
      const promise = new Promise<boolean>((r) => (resolve = r));
      landed.set(rev, (s = { promise, resolve }));
    }
    return s;
  };
  slot(next - 1).resolve(true);
  let resent = 0;
  const run = await closedLoop(inFlight, bounds, async (_c, i) => {
    const rev = next++;
    try {
      await send(rev, i);
      slot(rev).resolve(true);
    } catch (err) {
      slot(rev).resolve(false);
      throw err;
    } finally {
      landed.delete(rev - 1);
    }
    return true;
  }, watched);
  return { run, resent };

  async function send(rev: number, i: number): Promise<void> {
    for (;;) {
      const res = await client.kv.txn({
        compare: [{ key: log, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: rev - 1 }],
        success: [{ request_put: { key: log, value: value(i) } }, { request_put: { key: Buffer.from(`${prefix}k/${rev}`), value: value(i) } }],
        failure: [{ request_range: { key: log, keys_only: true } }],
      });
      if (res.succeeded) return;
      const head = Number(res.responses[0]?.response_range.kvs[0]?.mod_revision ?? 0);
      if (head >= rev) throw new Error(`revision ${rev} was taken by another writer`);
      resent++;
      if (!(await slot(rev - 1).promise)) throw new Error(`revision ${rev - 1} was not written: ${rev} cannot follow`);
    }
  }
}
