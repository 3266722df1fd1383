import { CompareResult, CompareTarget, type Etcd3, type ICompare, type ITxnResponse } from 'etcd3';
import { LogError, type LogEntry } from '../log.js';
import type { LogOptions } from '../abstract-log.js';
import { resourceOf, type Layout } from './layout.js';

/** One append on its way to etcd. */
export interface Pending {
  readonly entry: LogEntry;
  /** The encoded record: the log key's value and the object key's. */
  readonly bytes: Buffer;
  readonly expect: number | undefined;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  /** Set when etcd has answered: ok, or why not. */
  outcome?: 'ok' | Error;
}

/** Appends sent together, one after another; the next batch goes once etcd answered all of this one. */
export interface PendingBatch {
  readonly items: Pending[];
  readonly openedAt: number;
}

/** A revision etcd gave that is not base + seq: something else writes to this etcd. */
export class ForeignWriteError extends Error {}

/**
 * Writes one append as one etcd transaction: if the log key was last written at the revision just
 * before the append's own (no one took its seq) and the object key is at the revision the append
 * expects (the optimistic lock), put the record under both, else read both back to say why not.
 * The appends of a batch go one after another: etcd serves concurrent requests in no set order, and
 * one that overtook its predecessor would fail its check (sent all at once, 1000 appends took 3x as long).
 */
export async function sendAppend(client: Etcd3, layout: Layout, base: number, p: Pending, onRequest?: LogOptions['onRequest']): Promise<void> {
  const started = performance.now();
  await transact(client, layout, base, p);
  onRequest?.(p.entry.type === 'delete' ? 'delete' : p.expect === 0 ? 'create' : 'update', resourceOf(p.entry.key), (performance.now() - started) / 1000);
}

async function transact(client: Etcd3, layout: Layout, base: number, p: Pending): Promise<void> {
  const revision = base + p.entry.seq;
  const object = layout.object(p.entry.key);
  const compare: ICompare[] = [{ key: layout.log, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: revision - 1 }];
  if (p.expect !== undefined) {
    compare.push({ key: object, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: p.expect === 0 ? 0 : base + p.expect });
  }
  let res: ITxnResponse;
  try {
    res = await client.kv.txn({
      compare,
      success: [
        { request_put: { key: layout.log, value: p.bytes } },
        p.entry.type === 'put' ? { request_put: { key: object, value: p.bytes } } : { request_delete_range: { key: object } },
      ],
      failure: [{ request_range: { key: layout.log } }, { request_range: { key: object, keys_only: true } }],
    });
  } catch (err) {
    // The transaction may or may not have been applied; the watch will tell the views.
    const why = err instanceof Error ? err.message : String(err);
    return settle(p, new LogError('UNAVAILABLE', `etcd could not be reached: ${why}`, p.entry.seq - 1, { cause: err }));
  }
  if (res.succeeded) {
    const got = Number(res.header.revision);
    return settle(p, got === revision ? 'ok' : new ForeignWriteError(`etcd wrote seq ${p.entry.seq} at revision ${got}, not ${revision}: something other than orchd writes to this etcd`));
  }
  const head = res.responses[0]?.response_range.kvs[0];
  const headRevision = head ? Number(head.mod_revision) : 0;
  // Behind its own seq: an append before it failed and did not take its revision.
  if (headRevision < revision - 1) return settle(p, new LogError('RACED', `seq ${p.entry.seq} cannot follow: the append before it failed`, headRevision - base));
  if (headRevision === revision - 1) {
    const found = res.responses[1]?.response_range.kvs[0];
    const at = found ? Number(found.mod_revision) - base : 0;
    return settle(p, new LogError('CONFLICT', `key ${p.entry.key} is at ${at}, not ${p.expect}`, headRevision - base));
  }
  return settle(p, new LogError('RACED', `seq ${p.entry.seq} was taken by another writer`, headRevision - base));
}

function settle(p: Pending, outcome: 'ok' | Error): void {
  p.outcome = outcome;
}
