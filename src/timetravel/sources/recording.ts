/**
 * The history in a recording (`orchd export`; ../recording/format.ts): the state at its first version
 * (the snapshot, held decoded) and its entries after it, read from the file again for each question
 * (a recording of a million entries is more than is worth holding). So `log`, `state`, `diff` and
 * `history` read a recording as they read a data folder, and a replay reads it as it reads one.
 */
import type { LogEntry } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';
import { selects, takesKind, writerOf, type Change, type Filter, type History, type StateFilter, type Stored } from '../core/history.js';
import { openRecording, readEntries, type EntriesAt } from '../recording/read.js';
import type { RecordingHeader } from '../recording/format.js';

export async function openRecordingHistory(file: string): Promise<History> {
  const rec = await openRecording(file);
  await rec.close();
  return new RecordingHistory(file, rec.header, rec.state, rec.entriesAt);
}

/** An entry as a stored object: its JSON written from its recorded bytes. */
const storedOfEntry = (e: LogEntry): Stored => ({
  key: e.key,
  seq: e.seq,
  get object() {
    return e.value as KubeObject;
  },
  msgpack: () => e.raw,
});

class RecordingHistory implements History {
  readonly oldest: number;
  readonly head: number;
  readonly timesFromLog: boolean;
  /** Nothing below oldest was compacted: the recording was made from there. */
  readonly startsAtOldest = true;

  constructor(
    private readonly file: string,
    header: RecordingHeader,
    /** The state at the recording's start: puts, their values decoded when read. */
    private readonly snapshot: LogEntry[],
    private readonly entriesAt: EntriesAt,
  ) {
    // The state at `from` is the oldest the recording can tell.
    this.oldest = header.from;
    this.head = header.to;
    this.timesFromLog = header.timesFromLog;
  }

  /**
   * Where the pages read so far start, in order (their first versions): a read from a version
   * starts at the page that holds it, not at the top of the file (a replay's watcher catching up at
   * the end of a million entries would read them all).
   */
  private readonly pages: { first: number; at: EntriesAt }[] = [];

  /** The entries with from <= seq <= to, in pages. */
  async *storedEntries(from: number, to: number): AsyncIterable<LogEntry[]> {
    const onPage = (first: number, at: EntriesAt) => {
      if (this.pages.length === 0 || first > this.pages[this.pages.length - 1].first) this.pages.push({ first, at });
    };
    for await (const page of readEntries(this.file, this.pageOf(from), onPage)) {
      const kept = page.filter((e) => e.seq >= from && e.seq <= to);
      if (kept.length > 0) yield kept;
      // Up to the head, the file is read to its end record: a recording cut short is found out.
      if (to < this.head && page.length > 0 && page[page.length - 1].seq >= to) return;
    }
  }

  async entry(seq: number): Promise<LogEntry | undefined> {
    if (seq <= this.oldest || seq > this.head) return undefined;
    for await (const page of this.storedEntries(seq, seq)) return page.find((e) => e.seq === seq);
    return undefined;
  }

  /** Where the last page read whose first version is at or before seq starts (the entries' start when none is). */
  private pageOf(seq: number): EntriesAt {
    let lo = 0;
    let hi = this.pages.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.pages[mid].first <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? this.entriesAt : this.pages[lo - 1].at;
  }

  async *changes(from: number, to: number, filter: Filter): AsyncIterable<Change> {
    // Whether each key exists before an entry says whether a put adds or modifies it.
    const live = new Set(this.snapshot.map((e) => e.key));
    for await (const page of this.storedEntries(this.oldest + 1, to)) {
      for (const e of page) {
        const existed = live.has(e.key);
        if (e.type === 'delete') live.delete(e.key);
        else live.add(e.key);
        if (e.seq < from || !takesKind(filter, e.key)) continue;
        const object = e.value as KubeObject;
        if (!selects(filter, e.key, () => object)) continue;
        yield { rv: e.seq, type: e.type === 'delete' ? 'DELETED' : existed ? 'MODIFIED' : 'ADDED', key: e.key, object, time: e.time, writer: writerOf(e) };
      }
    }
  }

  async stateAt(rv: number, filter: StateFilter): Promise<Stored[]> {
    const at = new Map<string, Stored>();
    for (const e of this.snapshot) at.set(e.key, storedOfEntry(e));
    if (rv > this.oldest) {
      for await (const page of this.storedEntries(this.oldest + 1, rv)) {
        for (const e of page) {
          if (e.type === 'delete') at.delete(e.key);
          else at.set(e.key, storedOfEntry(e));
        }
      }
    }
    // Key order is collection order, then the namespace and name within it (`<group>/<plural>/<ns>/<name>`).
    return [...at.values()].filter((s) => takesKind(filter, s.key) && selects(filter, s.key, () => s.object)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async versionsOf(key: string): Promise<Change[]> {
    const out: Change[] = [];
    const first = this.snapshot.find((e) => e.key === key);
    // Its writer and commit time where the export recorded them (recordings made before did not).
    const writer = first && writerOf(first);
    if (first) out.push({ rv: first.seq, type: 'ADDED', key, object: first.value as KubeObject, time: first.time, ...(writer ? { writer } : {}), start: true });
    for await (const page of this.storedEntries(this.oldest + 1, this.head)) {
      for (const e of page) {
        if (e.key !== key) continue;
        const before = out[out.length - 1];
        const type = e.type === 'delete' ? 'DELETED' : before && before.type !== 'DELETED' ? 'MODIFIED' : 'ADDED';
        out.push({ rv: e.seq, type, key, object: e.value as KubeObject, time: e.time, writer: writerOf(e) });
      }
    }
    return out;
  }

  async versionAt(timeMs: number): Promise<number> {
    let found = 0;
    for await (const page of this.storedEntries(this.oldest + 1, this.head)) {
      for (const e of page) {
        if (e.time !== undefined && e.time > timeMs) return found;
        found = e.seq;
      }
    }
    return found;
  }

  async timeOf(rv: number): Promise<number | undefined> {
    for await (const page of this.storedEntries(rv, rv)) for (const e of page) return e.time;
    return undefined;
  }

  async close(): Promise<void> {}
}
