/** Writes a recording (`orchd export`; recording-format.ts lays it out) from a History. */
import { kinds } from '../../src/resources/registry.js';
import { splitKey } from '../../src/store/keys.js';
import { kindOfKey, StampClock, type History } from './history.js';
import { entryFrame, FORMAT, frame, HeadSlab, MAGIC, type RecordedEntry, type RecordingHeader } from './recording-format.js';

/**
 * Writes the recording of from..to of a history, record by record; returns how many entries. write
 * returns a promise only when it must be waited for (a flush): a million entries are two million
 * pieces, and an await of each was a turn of the microtask queue apiece.
 */
export async function writeRecording(history: History, from: number, to: number, write: (b: Buffer) => void | Promise<void>, onEntry?: (rv: number) => void): Promise<number> {
  const header: RecordingHeader = { format: FORMAT, from, to, oldest: history.oldest, head: history.head, timesFromLog: history.timesFromLog, exportedAt: new Date().toISOString() };
  await write(MAGIC);
  await write(frame(header));
  const state = await history.stateAt(from, { kinds });
  await write(frame({ rv: from, objects: state.map((s) => [s.key, s.object]) }));
  let n = 0;
  if (to > from && history.storedEntries) {
    const clock = history.timesFromLog ? undefined : new StampClock();
    const heads = new HeadSlab();
    // Consecutive entries are mostly of one collection: its kind is looked up once per run.
    let collection: string | undefined;
    for await (const page of history.storedEntries(from + 1, to)) {
      for (const e of page) {
        if (collection === undefined || !e.key.startsWith(collection) || e.key.charCodeAt(collection.length) !== 0x2f) {
          if (kindOfKey(e.key) === undefined) continue;
          collection = splitKey(e.key).collection;
        }
        for (const b of entryFrame(e, (clock ? clock.timeOf(e.value) : e.time) ?? null, heads)) {
          const flushed = write(b);
          if (flushed) await flushed;
        }
        n++;
      }
      if (page.length > 0) onEntry?.(page[page.length - 1].seq);
    }
  } else if (to > from) {
    for await (const c of history.changes(from + 1, to, { kinds })) {
      const entry: RecordedEntry = { rv: c.rv, type: c.type === 'DELETED' ? 'delete' : 'put', key: c.key, time: c.time ?? null, object: c.object };
      await write(frame(entry));
      onEntry?.(c.rv);
      n++;
    }
  }
  await write(frame({ end: n }));
  return n;
}

