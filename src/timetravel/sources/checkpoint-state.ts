/**
 * The state at a version read straight from a checkpoint beside the log and the log after it, without
 * loading the store. Loading the store for `state --at` made every key of a million-object
 * checkpoint into the key index (a slot and an object each) and left them to the garbage
 * collector: 10 s of CPU for a state that is, per key, one revision's bytes. A checkpoint's part
 * heads hold each key's revisions still in the log, and the part holds the bytes of each key's
 * newest one beside them (src/store/checkpoint-format.ts), so per key this picks the newest revision at
 * or before the version: the checkpoint's bytes when that is the key's newest, the log's entry
 * when it is older (read by its sequence number), and a write in the log's tail between the
 * checkpoint and the version overrides both. The objects stay bytes: the caller writes their JSON
 * from them (src/log/msgpack-json.ts), a part (about 1 MiB) at a time.
 *
 * Which checkpoint (pickCheckpoint): the whole newest one when the log still holds what it names.
 * It answers every version from the horizon on with no fold at all: a version before it through
 * each key's revision list (its bytes when unchanged since), one after it with the tail folded. An
 * index-only copy along the log names revisions but holds no bytes (every object is a read from the
 * log), so one is used only when the whole one is gone: the nearest at or before the version, with
 * the log between folded, else the oldest after it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { checkpointsBeside, type CheckpointAt } from '../../log/checkpoint-file.js';
import type { Log, LogEntry } from '../../log/log.js';
import { HEAD_AT, type PartHead } from '../../store/checkpoint-format.js';
import { LazyObject, storedOf, type StoredObject } from '../../store/stored-object.js';
import { checkedHead, checkpointIndex, readHeadBytes, type Part } from '../../store/checkpoint-reader.js';
import { TimeTravelError } from '../core/errors.js';

/** A value encryption at rest sealed: msgpack binary where an object would be. */
export const isSealed = (e: LogEntry): boolean => e.value instanceof Uint8Array;

/** How many older revisions of a part are read from the log at once (LevelDB serves gets on its thread pool). */
const READS_AT_ONCE = 128;

export interface CheckpointState {
  /**
   * Every object of the collections at version rv whose key starts with `<collection>/<prefix>`,
   * in key order, a page per checkpoint part; undefined when the log's tail holds a sealed value
   * (only the store, through encryption at rest, reads those). reuse: the caller is done with a
   * page's objects when it asks for the next one (their bytes are then overwritten).
   */
  pages(rv: number, collections: readonly string[], prefix: string, reuse?: boolean): Promise<AsyncIterable<StoredObject[]> | undefined>;
}

/**
 * The state reader of the checkpoints beside a log (`beside`: the whole one's file, the index copies
 * beside it); undefined when there is none this code reads within the log's horizon and head (the
 * store then replays the log).
 */
export function openCheckpointState(beside: string, log: Log): CheckpointState | undefined {
  const usable = checkpointsBeside(beside).filter((c) => c.seq >= log.firstSeq - 1 && c.seq <= log.lastSeq);
  if (usable.length === 0) return undefined;
  return {
    async pages(rv, collections, prefix, reuse = false) {
      const chosen = pickCheckpoint(usable, rv);
      const index = checkpointIndex(chosen.file);
      if (!index) return undefined;
      const { seq, parts } = index;
      const tail = new Map<string, LogEntry>();
      const wanted = collections.map((c) => `${c}/${prefix}`);
      if (rv > seq) {
        for await (const page of log.read(seq + 1, rv)) {
          for (const e of page) {
            if (!wanted.some((w) => e.key.startsWith(w))) continue;
            if (isSealed(e)) return undefined;
            tail.set(e.key, e);
          }
        }
      }
      return statePages(chosen.file, parts, log, rv, [...collections].sort(), prefix, tail, reuse);
    },
  };
}

/** The checkpoint to answer rv from, of those usable (newest first): see the top of this file. */
export function pickCheckpoint(usable: readonly CheckpointAt[], rv: number): CheckpointAt {
  return usable.find((c) => !c.indexOnly) ?? usable.find((c) => c.seq <= rv) ?? usable[usable.length - 1];
}

async function* statePages(file: string, parts: Part[], log: Log, rv: number, collections: string[], prefix: string, tail: Map<string, LogEntry>, reuse: boolean): AsyncIterable<StoredObject[]> {
  const fh = await open(file, 'r');
  // Reused, two in turn: one being read while the other's objects are written. Fresh ones each
  // part cost the kernel more (their pages) than the copy from the page cache.
  const buffers: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)];
  let turn = 0;
  const bodyOf = (step: Step): Promise<Buffer> | undefined => {
    if (!step.part) return undefined;
    const mine = (turn ^= 1);
    const into = reuse ? buffers[mine] : undefined;
    return readBody(fh, step.part, into).then((body) => {
      if (reuse && body.buffer !== into?.buffer) buffers[mine] = body;
      if (body.length !== step.bytes) throw notAsWritten(file, step.part!);
      return body;
    });
  };
  let body: Promise<Buffer> | undefined;
  try {
    const steps = stepsOf(file, fh, parts, rv, collections, prefix, tail)[Symbol.iterator]();
    let next = steps.next();
    body = next.done ? undefined : bodyOf(next.value);
    while (!next.done) {
      const step = next.value;
      const bytes = body;
      next = steps.next();
      // The next part's bytes are read (on libuv's thread pool) while this one's are written.
      body = next.done ? undefined : bodyOf(next.value);
      yield await resolve(step.items, await bytes, log, rv);
    }
  } finally {
    await body?.catch(() => undefined);
    await fh.close();
  }
}

/** What one page holds: items, and the part whose bytes some of them are (with how many bytes its objects hold). */
interface Step {
  items: Item[];
  part?: Part;
  bytes: number;
}

/** The pages' items, from the parts' heads (read here, a part's objects' bytes are not) merged with the log's tail. */
function* stepsOf(file: string, fh: FileHandle, parts: Part[], rv: number, collections: string[], prefix: string, tail: Map<string, LogEntry>): Iterable<Step> {
  for (const collection of collections) {
    const keyPrefix = `${collection}/${prefix}`;
    // The tail's keys in order, merged into the checkpoint's as the parts are walked.
    const written = [...tail.keys()].filter((k) => k.startsWith(keyPrefix)).sort();
    let w = 0;
    let last = '';
    const own = parts.filter((p) => p.collection === collection);
    for (let i = 0; i < own.length; i++) {
      const part = own[i];
      // With the parts' first keys, a part wholly before the namespace's keys, or after them, is not read.
      const next = own[i + 1]?.first;
      if (prefix !== '' && next !== undefined && next <= keyPrefix) continue;
      if (prefix !== '' && part.first !== undefined && part.first > keyPrefix && !part.first.startsWith(keyPrefix)) break;
      const head = readHead(file, fh, part);
      if (part.first !== undefined && head.k[0] !== part.first) throw notAsWritten(file, part);
      if (head.k[0] <= last) throw notAsWritten(file, part);
      last = head.k[head.k.length - 1];
      if (prefix !== '' && (last < keyPrefix || !(head.k[0] < keyPrefix || head.k[0].startsWith(keyPrefix)))) continue;
      const picks = pick(head, rv, keyPrefix, written, w, tail, part.objects > 0);
      w = picks.written;
      if (picks.items.length > 0) yield { items: picks.items, part: picks.fromPart ? part : undefined, bytes: picks.bytes };
    }
    const rest: Item[] = [];
    for (; w < written.length; w++) rest.push({ from: 'tail', entry: tail.get(written[w])! });
    if (rest.length > 0) yield { items: rest, bytes: 0 };
  }
}

/** What a key holds at the version: a range of its part's bytes, a revision to read from the log, or a tail entry. */
type Item = { from: 'part'; key: string; seq: number; start: number; end: number } | { from: 'log'; key: string; rev: number } | { from: 'tail'; entry: LogEntry };

/**
 * The items of one part's keys at rv, merged with the tail's written keys from index w on that sort
 * before its last key; the index the merge got to, and whether any item is bytes of the part.
 */
function pick(
  head: PartHead,
  rv: number,
  keyPrefix: string,
  written: string[],
  w: number,
  tail: Map<string, LogEntry>,
  hasBytes: boolean,
): { items: Item[]; written: number; fromPart: boolean; bytes: number } {
  const items: Item[] = [];
  let fromPart = false;
  const last = head.k[head.k.length - 1];
  let at = 0;
  for (let i = 0, o = 0; i < head.k.length; i++) {
    const key = head.k[i];
    const r = head.r[i];
    const newest = typeof r === 'number' ? r : r[r.length - 1];
    const start = at;
    if (newest > 0 && hasBytes) at += head.n[o++];
    if (!key.startsWith(keyPrefix)) continue;
    while (w < written.length && written[w] < key) items.push({ from: 'tail', entry: tail.get(written[w++])! });
    if (w < written.length && written[w] === key) {
      items.push({ from: 'tail', entry: tail.get(written[w++])! });
      continue;
    }
    const rev = revisionAt(r, rv);
    if (rev === undefined) continue;
    if (rev === newest && hasBytes) {
      items.push({ from: 'part', key, seq: rev, start, end: at });
      fromPart = true;
    } else items.push({ from: 'log', key, rev });
  }
  while (w < written.length && written[w] <= last) items.push({ from: 'tail', entry: tail.get(written[w++])! });
  return { items, written: w, fromPart, bytes: at };
}

/** The revision that held a key at rv, from its revisions oldest first (a delete negative); undefined when none did. */
function revisionAt(r: number | number[], rv: number): number | undefined {
  if (typeof r === 'number') return r > 0 && r <= rv ? r : undefined;
  for (let i = r.length - 1; i >= 0; i--) if (Math.abs(r[i]) <= rv) return r[i] > 0 ? r[i] : undefined;
  return undefined;
}

/** The items as stored objects, older revisions read from the log a batch at a time; deletes left out. */
async function resolve(items: Item[], body: Buffer | undefined, log: Log, rv: number): Promise<StoredObject[]> {
  const out: (StoredObject | undefined)[] = new Array(items.length);
  const reads: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (it.from === 'part') out[i] = new LazyObject(it.key, it.seq, body!, it.start, it.end);
    else if (it.from === 'log') reads.push(i);
    else out[i] = it.entry.type === 'delete' ? undefined : storedOf(it.entry, it.entry.key, it.entry.seq);
  }
  for (let b = 0; b < reads.length; b += READS_AT_ONCE) {
    const batch = reads.slice(b, b + READS_AT_ONCE);
    const entries = await Promise.all(batch.map((i) => log.get((items[i] as { rev: number }).rev)));
    batch.forEach((i, n) => {
      const { key, rev } = items[i] as { key: string; rev: number };
      const e = entries[n];
      if (!e) throw new TimeTravelError(`version ${rv} is compacted: revision ${rev} of ${key} is no longer in the log (the oldest readable version is ${log.firstSeq - 1})`);
      if (isSealed(e)) throw new TimeTravelError(`revision ${rev} of ${key} is encrypted at rest: give --encryption-provider-config`);
      out[i] = storedOf(e, key, rev);
    });
  }
  return out.filter((s) => s !== undefined);
}

/** A part's head, read on its own: a part none of whose keys are wanted is not read further. */
function readHead(file: string, fh: FileHandle, part: Part): PartHead {
  // Decoded into strings and numbers of their own: the buffer is read into again for the next head.
  const head = checkedHead(readHeadBytes(fh.fd, part));
  if (!head || head.c !== part.collection) throw notAsWritten(file, part);
  return head;
}

/** A part's objects' bytes, one after another as the head lists them: into `into` when it is large enough. */
async function readBody(fh: FileHandle, part: Part, into?: Buffer): Promise<Buffer> {
  const from = part.at + HEAD_AT + part.headLength;
  const length = part.length - HEAD_AT - part.headLength;
  const body = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  const { bytesRead } = await fh.read(body, 0, length, from);
  if (bytesRead !== length) throw new TimeTravelError(`checkpoint file ends inside a part (at byte ${from + bytesRead})`);
  return body;
}

const notAsWritten = (file: string, part: Part): Error =>
  new TimeTravelError(`checkpoint file ${file}: the part at byte ${part.at} is not as orchd writes them (keys out of order or sizes that do not add up)`);
