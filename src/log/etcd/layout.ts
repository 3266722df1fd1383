import { decodeEntry, StoredEntry } from '../codec.js';
import type { LogEntry } from '../log.js';
import { stampVersion } from '../stamp.js';

/** A stored key and value at a revision, from either client (etcd3 gives revisions as text, the lean client as numbers). */
export interface StoredKv {
  key: Buffer;
  value: Buffer;
  mod_revision: number | string;
}

/** A watch event of either client. */
export interface StoredEvent {
  type: 'Put' | 'Delete';
  kv: StoredKv;
  prev_kv?: StoredKv;
}

/*
 * How the log lies in etcd, as kube-apiserver lays out its objects (default prefix "/orchd/registry/"):
 *
 *   <prefix><key>      each storage key's newest record (codec.ts's record bytes: type, commit time,
 *                      key, value), written by one transaction per write whose compare on the key's
 *                      mod revision is the optimistic lock, and deleted (not tombstoned) by a delete.
 *                      etcd's own MVCC history is the log: the entry of seq s is the event etcd gives
 *                      at revision s (a delete's value is the state it removed: prev_kv).
 *   <prefix>#fence     rewritten, empty, when a read of the history needs an event past its end.
 *   <prefix>#secret    32 random bytes: what replicas sign continue tokens with, so that a list's next
 *                      page can be asked of any replica. '#' starts no storage key (those start with a
 *                      group name or, for the core group, '/'), and readers skip it.
 *
 * seq = resourceVersion = the etcd revision, with no offset: `etcdctl get --rev`, etcd's compaction
 * and orchd speak the same numbers. Other keys and other writers take revisions too, so the seqs of
 * this log have holes.
 */
export class Layout {
  /** The range of every object key: [prefix, end). */
  readonly prefix: Buffer;
  readonly end: Buffer;
  readonly secret: Buffer;
  /** Written when a read of the history must be shown where it ends (range-reads.ts readEntries). */
  readonly fence: Buffer;

  constructor(readonly name: string) {
    this.prefix = Buffer.from(name);
    this.end = prefixEnd(this.prefix);
    this.secret = Buffer.from(`${name}#secret`);
    this.fence = Buffer.from(`${name}#fence`);
  }

  object(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key)]);
  }

  /** Whether an etcd key under the prefix is an object's (not one of the log's own). */
  isObject(etcdKey: Buffer): boolean {
    return etcdKey[this.prefix.length] !== 0x23;
  }

  /** The storage key of an object's etcd key. */
  keyOf(etcdKey: Buffer): string {
    return etcdKey.toString('utf8', this.prefix.length);
  }

  /** The entry an object key's value holds, at the revision it was written. */
  entryOf(kv: StoredKv): LogEntry {
    return decodeEntry(Number(kv.mod_revision), kv.value);
  }

  /** The entry a watch event is: a put's record, or a delete at its revision carrying the state it removed. */
  eventEntry(ev: StoredEvent): LogEntry {
    const seq = Number(ev.kv.mod_revision);
    if (ev.type === 'Put') return decodeEntry(seq, ev.kv.value);
    const key = ev.kv.key.toString('utf8', this.prefix.length);
    if (!ev.prev_kv) return { seq, type: 'delete', key, value: null };
    const prev = decodeEntry(Number(ev.prev_kv.mod_revision), ev.prev_kv.value);
    return prev instanceof StoredEntry ? new StoredEntry(seq, 'delete', key, prev.bytes, prev.start, prev.end, undefined) : { seq, type: 'delete', key, value: stampVersion(prev.value, seq) };
  }
}

/** The first key after every key that starts with prefix (etcd's range_end for a prefix). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** The resource of a storage key (`<group>/<plural>/…`) as Kubernetes names it: `<plural>.<group>`, the core group's plural alone. */
export function resourceOf(key: string): string {
  const [group, plural] = key.split('/', 2);
  return group ? `${plural}.${group}` : (plural ?? key);
}
