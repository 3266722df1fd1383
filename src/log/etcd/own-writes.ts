import type { LogEntry, LogRecord } from '../log.js';
import { stampVersion } from '../stamp.js';

interface Own {
  record: LogRecord;
  bytes: Buffer;
  time: number;
}

/**
 * This replica's puts in flight, by storage key. When the watch brings one back, its entry is the
 * record the writer gave, as LevelDB's log hands its batch to the views, instead of a decoding of
 * the bytes etcd echoes (a msgpack decode per create, on the path every write waits on). Matched by
 * the bytes themselves, so another replica's write of the key is decoded as before. A value sealed
 * by encryption at rest is left to the bytes: the encrypted log opens what it reads.
 */
export class OwnWrites {
  private readonly byKey = new Map<string, Own[]>();

  /** How many keys have puts in flight (0: nothing to match, nothing to decode a key for). */
  get size(): number {
    return this.byKey.size;
  }

  /** Notes a put about to be sent; the returned function forgets it (once its Txn has answered). */
  add(record: LogRecord, bytes: Buffer, time: number): () => void {
    if (record.type !== 'put' || record.value instanceof Uint8Array) return forgetNothing;
    const own: Own = { record, bytes, time };
    const list = this.byKey.get(record.key);
    if (list) list.push(own);
    else this.byKey.set(record.key, [own]);
    return () => this.remove(own);
  }

  /** The entry of the put of key at seq whose stored bytes are value, when this replica sent it. */
  take(seq: number, key: string, value: Buffer): LogEntry | undefined {
    const list = this.byKey.get(key);
    const own = list?.find((o) => o.bytes.equals(value));
    if (!own) return undefined;
    this.remove(own);
    const { record } = own;
    const entry: LogEntry = { seq, type: 'put', key, value: stampVersion(record.value, seq), time: own.time };
    if (record.writer !== undefined) entry.writer = record.writer;
    return entry;
  }

  private remove(own: Own): void {
    const list = this.byKey.get(own.record.key);
    if (!list) return;
    const i = list.indexOf(own);
    if (i < 0) return;
    if (list.length === 1) this.byKey.delete(own.record.key);
    else list.splice(i, 1);
  }
}

const forgetNothing = (): void => undefined;
