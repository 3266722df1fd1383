/**
 * An entry's writer as the time-travel tools take it from a log they read: decoded once for each
 * distinct writer when printed, or as the stored bytes when written into another log. Beside
 * history.ts, not in it: these need the log's codec (msgpackr), which a command reading a server
 * does not load.
 */
import { StoredEntry, writerBytes } from '../../log/codec.js';
import type { Author, LogEntry } from '../../log/log.js';
import { writerOf } from './history.js';

/**
 * writerOf for many entries, each writer decoded once: the versions of an object are mostly written
 * by the same few writers, byte for byte, and decoding each entry's (a msgpack map of its own) was a
 * tenth of `history`'s time. The writers given back are shared: read, never changed.
 */
export function writersOf(): (e: LogEntry) => Author | undefined {
  const seen = new Map<string, Author | undefined>();
  return (e) => {
    const raw = e instanceof StoredEntry ? e.writerRaw : undefined;
    if (!raw) return writerOf(e);
    const bytes = raw.toString('latin1');
    if (!seen.has(bytes)) seen.set(bytes, writerOf(e));
    return seen.get(bytes);
  };
}

/**
 * An entry's writer as bytes to store again (a recording, a replay's log): the log's own bytes where
 * it read them, none when they are sealed and encryption at rest did not open them.
 */
export function writerBytesOf(e: LogEntry): Uint8Array | undefined {
  if (e.writer instanceof Uint8Array) return undefined;
  return e instanceof StoredEntry && e.writerRaw ? e.writerRaw : writerBytes(e.writer);
}
