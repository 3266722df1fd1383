import { AbstractLog, type Batch, type Found, type LogOptions } from './abstract-log.js';
import { decodeEntry } from './codec.js';
import type { Checkpoint, LogEntry, SavedCheckpoint, VersionIndex } from './log.js';
import { liveFromRows } from './version-index.js';

/**
 * What a MemoryLog keeps between instances: a new MemoryLog on the same disk is a restart. It holds
 * encoded bytes, as a real disk does, so values round-trip through the same codec as LevelDB's.
 */
export class MemoryDisk {
  /** seq → encoded record; Map order is insertion order, which is seq order. */
  readonly entries = new Map<number, Buffer>();
  /** The version index: each key's versions, ascending (a delete's seq negated), as LevelDB's rows hold them. */
  readonly index = new Map<string, number[]>();
  horizon: number | undefined;
  checkpoint: { seq: number; parts: Buffer[] } | undefined;
  /** Set it to make every later write fail with it, as a full or failing disk would. */
  failWrites: Error | undefined;
  /** One open log per disk, as LevelDB's LOCK file allows. */
  inUse = false;
}

export interface MemoryLogOptions extends LogOptions {
  disk?: MemoryDisk;
}

const PAGE = 1000;

/**
 * The log in memory, for tests of the layers above and to keep the contract suite honest about
 * what is LevelDB's and what is the log's. A write completes one event-loop turn later (as a sync
 * would, later), so appends made meanwhile group into the next batch here too.
 */
export class MemoryLog extends AbstractLog {
  readonly disk: MemoryDisk;
  readonly index: VersionIndex;

  constructor(options: MemoryLogOptions = {}) {
    super(options);
    this.disk = options.disk ?? new MemoryDisk();
    this.index = new MemoryIndex(this.disk.index);
  }

  protected async _open(): Promise<Found> {
    if (this.disk.inUse) throw new Error('the memory disk is in use by another open log');
    this.disk.inUse = true;
    let first: number | undefined;
    let last: number | undefined;
    for (const seq of this.disk.entries.keys()) {
      first ??= seq;
      last = seq;
    }
    const lastBytes = last === undefined ? undefined : this.disk.entries.get(last);
    return { first, last, horizon: this.disk.horizon, lastTime: lastBytes && decodeEntry(last!, lastBytes).time };
  }

  protected async _close(): Promise<void> {
    this.disk.inUse = false;
  }

  protected _write(batch: Batch): Promise<void> {
    return new Promise((resolve, reject) => {
      setImmediate(() => {
        const failure = this.disk.failWrites;
        if (failure) return reject(failure);
        batch.entries.forEach((e, i) => {
          this.disk.entries.set(e.seq, batch.values[i]);
          let versions = this.disk.index.get(e.key);
          if (!versions) this.disk.index.set(e.key, (versions = []));
          versions.push(e.type === 'delete' ? -e.seq : e.seq);
        });
        resolve();
      });
    });
  }

  protected _read(start: number, end: number): AsyncIterable<LogEntry[]> {
    // The snapshot: references to the stored bytes, taken now.
    const snapshot: [number, Buffer][] = [];
    for (let seq = start; seq <= end; seq++) {
      const bytes = this.disk.entries.get(seq);
      if (bytes) snapshot.push([seq, bytes]);
    }
    return (async function* pages() {
      for (let i = 0; i < snapshot.length; i += PAGE) {
        yield snapshot.slice(i, i + PAGE).map(([seq, bytes]) => decodeEntry(seq, bytes));
      }
    })();
  }

  protected async _getBytes(seq: number): Promise<Buffer | undefined> {
    return this.disk.entries.get(seq);
  }

  protected async _saveHorizon(horizon: number): Promise<void> {
    this.disk.horizon = horizon;
  }

  protected async _deleteRange(from: number, below: number, max: number, keep: (seq: number) => boolean): Promise<number | undefined> {
    let last: number | undefined;
    let seen = 0;
    for (const seq of this.disk.entries.keys()) {
      if (seq >= below || seen === max) break;
      if (seq < from) continue;
      if (!keep(seq)) {
        const { key } = decodeEntry(seq, this.disk.entries.get(seq)!);
        this.disk.entries.delete(seq);
        const left = this.disk.index.get(key)?.filter((v) => Math.abs(v) !== seq) ?? [];
        if (left.length > 0) this.disk.index.set(key, left);
        else this.disk.index.delete(key);
      }
      last = seq;
      seen++;
    }
    return last;
  }

  protected async _saveCheckpoint(cp: Checkpoint): Promise<void> {
    // Copies: the caller's buffers are theirs to reuse. Replaced only once every part is in.
    const parts: Buffer[] = [];
    for await (const pieces of cp.parts) parts.push(Buffer.concat(pieces));
    this.disk.checkpoint = { seq: cp.seq, parts };
  }

  protected async _loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    const cp = this.disk.checkpoint;
    return cp && { seq: cp.seq, parts: copies(cp.parts) };
  }
}

async function* copies(parts: readonly Buffer[]): AsyncIterable<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}

class MemoryIndex implements VersionIndex {
  constructor(private readonly versions: Map<string, number[]>) {}

  async versionsOf(key: string): Promise<number[]> {
    return [...(this.versions.get(key) ?? [])];
  }

  liveAt(prefix: string, seq: number): AsyncIterable<{ key: string; seq: number }[]> {
    const keys = [...this.versions.keys()].filter((k) => k.startsWith(prefix)).sort();
    const rows = keys.map((key) => this.versions.get(key)!.map((version) => ({ key, version })));
    return liveFromRows(
      (async function* () {
        yield rows.flat();
      })(),
      seq,
    );
  }
}
