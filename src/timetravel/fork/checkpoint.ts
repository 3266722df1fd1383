/**
 * The checkpoint a fork writes beside its log: the index of the view at the fork point (each key and
 * its revisions, in the parts a restart loads: src/store/checkpoint-format.ts), saved as the
 * index-only copy along the log at N (src/log/checkpoint-file.ts saveAlongFile). `orchd serve` on
 * the fork is ready once it has read the keys, and reads each part's objects from the log when the
 * part is first used, instead of folding every entry of the history.
 *
 * Index-only, not whole: the objects are in the fork's log already. A whole checkpoint wrote them
 * twice more (a spill file to read them back in key order, then the checkpoint: 1.5 GB each at a
 * million Events); the index is ~50 MB there. It is made without a store and without holding the
 * objects: while the entries are imported, each key's revisions and its newest object's size are
 * kept (~100 bytes a key).
 */
import { saveAlongFile } from '../../log/checkpoint-file.js';
import { isPackedMap } from '../../log/codec.js';
import { checkpointFile, type ImportedEntry } from '../../log/leveldb-log.js';
import { checkpointOfKeys, type HeldKey } from '../../store/checkpoint-format.js';
import { listIn, splitKey } from '../../api/object-keys.js';

export class ForkCheckpoint {
  /** Each key's revisions, oldest first (a delete negative, as a part head lists them), and its newest object's size (0 after a delete). */
  private readonly keys = new Map<string, HeldKey>();
  /** False once an entry's value is not an object's msgpack (sealed by encryption at rest): only the store opens those. */
  private usable = true;

  /** The pages as they are, each entry noted (they come in sequence order per key). */
  async *tap(pages: AsyncIterable<ImportedEntry[]>): AsyncIterable<ImportedEntry[]> {
    for await (const page of pages) {
      this.note(page);
      yield page;
    }
  }

  private note(page: readonly ImportedEntry[]): void {
    if (!this.usable) return;
    for (const e of page) {
      const put = e.type === 'put';
      if (put && !isPackedMap(e.raw)) {
        this.usable = false;
        return;
      }
      const rev = put ? e.seq : -e.seq;
      const size = put ? e.raw.byteLength : 0;
      const k = this.keys.get(e.key);
      if (!k) this.keys.set(e.key, { r: rev, size });
      else {
        if (typeof k.r === 'number') k.r = [k.r, rev];
        else k.r.push(rev);
        k.size = size;
      }
    }
  }

  /** Writes the index-only checkpoint at seq beside the log at logPath; false, writing nothing, when a value was sealed. */
  async save(logPath: string, seq: number): Promise<boolean> {
    if (!this.usable) return false;
    const byCollection = new Map<string, string[]>();
    for (const key of this.keys.keys()) listIn(byCollection, splitKey(key).collection).push(key);
    await saveAlongFile(
      checkpointFile(logPath),
      checkpointOfKeys(seq, byCollection, (key) => this.keys.get(key)!),
    );
    return true;
  }
}
