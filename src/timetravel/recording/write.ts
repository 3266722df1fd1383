/** Writes a recording (`orchd export`; format.ts lays it out) from a History. */
import { crc32 } from 'node:zlib';
import { packJson, unpackJson, writerBytes } from '../../log/codec.js';
import { everyKindAt } from '../core/custom-kinds.js';
import { stateInPages, StampClock, type History } from '../core/history.js';
import { writerBytesOf } from '../core/entry-writers.js';
import { TimeTravelError } from '../core/errors.js';
import type { LogEntry } from '../../log/log.js';
import { FORMAT, frame, MAGIC, type RecordingHeader } from './format.js';
import { ENTRIES, PageWriter, STATE } from './pages.js';

/**
 * Writes the recording of from..to of a history, a page at a time; returns how many entries. write
 * settles once its buffer is written (the writer then reuses it). From a data folder the entries'
 * stored records are copied as the log holds them: no entry is decoded or encoded.
 */
export async function writeRecording(history: History, from: number, to: number, write: (b: Buffer) => Promise<void>, onEntry?: (rv: number) => void): Promise<number> {
  const header: RecordingHeader = { format: FORMAT, from, to, oldest: history.oldest, head: history.head, timesFromLog: history.timesFromLog, exportedAt: new Date().toISOString() };
  await write(MAGIC);
  await write(frame(header));
  const put = async (pages: PageWriter, last = false) => {
    if (!pages.full && !last) return;
    const f = pages.take(crc32);
    if (!f) return;
    await write(f);
    pages.release(f);
  };
  const state = new PageWriter(STATE);
  // The state at 0 is empty (and a server asked for a list at 0 answers with its newest).
  for await (const page of from === 0 ? [] : stateInPages(history, from, { kinds: await everyKindAt(history, from) })) {
    const seqs = page.map((s) => s.seq ?? Number(s.object.metadata.resourceVersion));
    const written = await writesOf(history, seqs);
    for (const [i, s] of page.entries()) {
      state.addValue(seqs[i], 'put', s.key, s.msgpack?.() ?? packJson(s.object), written[i]?.time, written[i] && writerBytesOf(written[i]));
      await put(state);
    }
  }
  await put(state, true);
  const pages = new PageWriter(ENTRIES);
  let n = 0;
  const stored = to > from ? history.storedRecords?.(from + 1, to) : undefined;
  if (stored) {
    for await (const { seqs, records } of stored) {
      for (let i = 0; i < seqs.length; i++) {
        if (isSealed(records[i])) throw new TimeTravelError(`log entry ${seqs[i]} is encrypted at rest: give the --encryption-provider-config it was written with`);
        pages.addRecord(seqs[i], records[i]);
        await put(pages);
      }
      n += seqs.length;
      onEntry?.(seqs[seqs.length - 1]);
    }
  } else if (to > from && history.storedEntries) {
    const clock = history.timesFromLog ? undefined : new StampClock();
    for await (const page of history.storedEntries(from + 1, to)) {
      for (const e of page) {
        pages.addValue(e.seq, e.type, e.key, e.raw ?? packJson(e.value), clock ? clock.timeOf(e.value) : e.time, writerBytesOf(e));
        await put(pages);
      }
      n += page.length;
      if (page.length > 0) onEntry?.(page[page.length - 1].seq);
    }
  } else if (to > from) {
    for await (const c of history.changes(from + 1, to, {})) {
      pages.addValue(c.rv, c.type === 'DELETED' ? 'delete' : 'put', c.key, packJson(c.object), c.time, writerBytes(c.writer));
      await put(pages);
      onEntry?.(c.rv);
      n++;
    }
  }
  await put(pages, true);
  await write(frame({ end: n }));
  return n;
}

/**
 * The entries that wrote the state's objects, where the history reads them (a data folder): a
 * recording that starts mid-history then says who wrote each object's first version in it, and
 * when. A server's or a recording's history reads none: its state is recorded without them.
 */
async function writesOf(history: History, seqs: number[]): Promise<(LogEntry | undefined)[]> {
  return history.writesAt ? history.writesAt(seqs) : seqs.map(() => undefined);
}

/**
 * Whether a stored record's value is sealed by encryption at rest (msgpack binary where an object
 * would be), found from the record's layout (src/log/codec.ts: "t", "c" and its float64 when the
 * log kept times, "k" and the key, "v" and the value) without decoding it; a record laid out
 * otherwise is decoded.
 */
function isSealed(r: Buffer): boolean {
  const at = r[0] === 0xde && r[1] === 0 && (r[2] === 4 || r[2] === 5) ? 20 : r[0] === 0xde && r[1] === 0 && r[2] === 3 ? 9 : r[0] === 0x83 ? 7 : -1;
  const m = r[at];
  const key = at < 0 ? -1 : m >= 0xa0 && m <= 0xbf ? 1 + (m & 0x1f) : m === 0xd9 ? 2 + r[at + 1] : m === 0xda ? 3 + r.readUInt16BE(at + 1) : -1;
  // The writer, when the entry has one, sits between the key and the value: skipped by its length.
  let v = at + key;
  if (key >= 0 && r[v] === 0xa1 && r[v + 1] === 0x77) {
    const b = r[v + 2];
    v += 2 + (b === 0xc4 ? 2 + r[v + 3] : b === 0xc5 ? 3 + r.readUInt16BE(v + 3) : b === 0xc6 ? 5 + r.readUInt32BE(v + 3) : NaN);
  }
  if (key < 0 || Number.isNaN(v) || r[at - 2] !== 0xa1 || r[at - 1] !== 0x6b || r[v] !== 0xa1 || r[v + 1] !== 0x76) {
    return (unpackJson(r) as { v?: unknown } | null)?.v instanceof Uint8Array;
  }
  const t = r[v + 2];
  return t === 0xc4 || t === 0xc5 || t === 0xc6;
}
