/**
 * The checkpoint a fork writes beside its log: the view at the fork point as a restart loads it
 * (src/store/checkpoint-format.ts), so `orchd serve` on a fork reads each part's keys and is ready, instead
 * of folding every entry of the history as a restart without one does (about 20 s at a million
 * entries: longer than the replay of the recording that a fork is measured against).
 *
 * It is made without a store and without holding the objects: while the entries are imported, each
 * key's revisions are kept, and each put's bytes are appended to a spill file beside the log (an
 * index of the keys stays in memory, ~150 bytes a key; the objects stay on the disk). Then the keys
 * are put in order per collection and the parts written with their newest objects read back from
 * the spill, a run of adjacent objects at a time. The bytes are laid out by the store's checkpoint
 * format (checkpointOfKeys): this file only says which keys, revisions and objects.
 */
import { closeSync, openSync, readSync, rmSync, writevSync } from 'node:fs';
import { saveCheckpointFile } from '../../log/checkpoint-file.js';
import { isPackedMap } from '../../log/codec.js';
import { checkpointFile, type ImportedEntry } from '../../log/leveldb-log.js';
import { checkpointOfKeys } from '../../store/checkpoint-format.js';
import { listIn, splitKey } from '../../api/object-keys.js';

/** At most this many buffers per writev (Linux's IOV_MAX). */
const IOV_MAX = 1024;

interface KeyState {
  /** Its revisions, oldest first; negative: a delete (as a checkpoint's part head lists them). */
  r: number | number[];
  /** Where its newest object's bytes are in the spill; -1 when its newest revision is a delete. */
  at: number;
  size: number;
}

export class ForkCheckpoint {
  private readonly keys = new Map<string, KeyState>();
  private readonly fd: number;
  private spilled = 0;
  /** False once an entry's value is not an object's msgpack (sealed by encryption at rest): only the store opens those. */
  private usable = true;

  constructor(private readonly spill: string) {
    this.fd = openSync(spill, 'w+');
  }

  /** The pages as they are, each entry noted (they come in sequence order per key). */
  async *tap(pages: AsyncIterable<ImportedEntry[]>): AsyncIterable<ImportedEntry[]> {
    for await (const page of pages) {
      this.note(page);
      yield page;
    }
  }

  private note(page: readonly ImportedEntry[]): void {
    if (!this.usable) return;
    const bodies: Uint8Array[] = [];
    let at = this.spilled;
    for (const e of page) {
      const put = e.type === 'put';
      if (put && !isPackedMap(e.raw)) {
        this.usable = false;
        return;
      }
      const rev = put ? e.seq : -e.seq;
      const size = put ? e.raw.byteLength : 0;
      const where = put ? at : -1;
      if (put) {
        bodies.push(e.raw);
        at += size;
      }
      const k = this.keys.get(e.key);
      if (!k) this.keys.set(e.key, { r: rev, at: where, size });
      else {
        if (typeof k.r === 'number') k.r = [k.r, rev];
        else k.r.push(rev);
        k.at = where;
        k.size = size;
      }
    }
    this.append(bodies, at);
  }

  /** The bodies at the spill's end, in place (no copy into one buffer): vectored writes, as much as each takes. */
  private append(bodies: Uint8Array[], end: number): void {
    for (let i = 0; this.spilled < end;) {
      let wrote = writevSync(this.fd, bodies.slice(i, i + IOV_MAX), this.spilled);
      this.spilled += wrote;
      for (; i < bodies.length && wrote >= bodies[i].byteLength; i++) wrote -= bodies[i].byteLength;
      // Cut inside a body: the rest of it goes first next time.
      if (wrote > 0) bodies[i] = bodies[i].subarray(wrote);
    }
  }

  /** Writes the checkpoint at seq beside the log at logPath; false, writing nothing, when a value was sealed. */
  async save(logPath: string, seq: number): Promise<boolean> {
    if (!this.usable) return false;
    const byCollection = new Map<string, string[]>();
    for (const key of this.keys.keys()) listIn(byCollection, splitKey(key).collection).push(key);
    await saveCheckpointFile(
      checkpointFile(logPath),
      checkpointOfKeys(
        seq,
        byCollection,
        (key) => this.keys.get(key)!,
        (held) => this.read(held),
      ),
    );
    return true;
  }

  /** Closes and removes the spill. */
  close(): void {
    closeSync(this.fd);
    rmSync(this.spill, { force: true });
  }

  /** The objects' bytes from the spill: one read per run of objects that lie side by side there. */
  private read(held: readonly KeyState[]): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0; i < held.length;) {
      let j = i + 1;
      let end = held[i].at + held[i].size;
      for (; j < held.length && held[j].at === end; j++) end += held[j].size;
      const run = Buffer.allocUnsafe(end - held[i].at);
      for (let done = 0; done < run.length;) {
        const n = readSync(this.fd, run, done, run.length - done, held[i].at + done);
        if (n === 0) throw new Error(`fork checkpoint: the spill ${this.spill} ends early`);
        done += n;
      }
      for (let at = 0; i < j; i++) out.push(run.subarray(at, (at += held[i].size)));
    }
    return out;
  }
}
