/**
 * One version of one object as the view and every reader hold it: a plain object, or a LazyObject
 * that keeps the bytes it was read from storage as and decodes or encodes them on first use.
 */
import { packJson, StoredEntry, unpackJson } from '../log/codec.js';
import type { LogEntry } from '../log/log.js';
import { msgpackToJson } from '../log/msgpack-json.js';
import { stampVersion } from '../log/stamp.js';
import type { KubeObject } from '../api/types.js';

/** One version of one object as the view holds it. Immutable once stored: readers share it. */
export interface StoredObject {
  key: string;
  seq: number;
  obj: KubeObject;
  /**
   * UTF-8 JSON of obj, encoded at most once and shared by every reader (see encodeStored). Bytes,
   * not a string: answers and watch lines are assembled from them without transcoding, and they
   * live outside the JS heap the garbage collector walks.
   */
  json?: Buffer;
}

/**
 * A stored object held as the msgpack bytes the log read (raw) until something reads obj: a replay
 * of a million entries then builds no object trees (building them, and the garbage collector walking
 * them, was most of a replay's time). The decoded object is kept once read, so only objects that are
 * used live on the JS heap as trees.
 */
export class LazyObject implements StoredObject {
  private decoded: KubeObject | undefined;
  /** The top-level apiVersion, noted when json was made straight from the bytes (no tree to read it from). */
  private noted: { apiVersion: string | undefined } | undefined;
  json?: Buffer;

  /**
   * The bytes are bytes[start, end): a range of the buffer they were read into (a log page, a
   * checkpoint part), not a view object of their own, which a million objects would each carry for
   * the garbage collector to mark.
   */
  constructor(
    readonly key: string,
    readonly seq: number,
    private readonly bytes: Buffer,
    private readonly start = 0,
    private readonly end = bytes.length,
  ) {}

  /** The msgpack bytes (a view made on each call). */
  get raw(): Buffer {
    return this.start === 0 && this.end === this.bytes.length ? this.bytes : this.bytes.subarray(this.start, this.end);
  }

  /** The buffer the bytes are part of, and how many they are. */
  get buffer(): ArrayBufferLike {
    return this.bytes.buffer;
  }

  get size(): number {
    return this.end - this.start;
  }

  get obj(): KubeObject {
    // The stored bytes may not carry the version (a shared log's do not): it is this entry's seq.
    return (this.decoded ??= stampVersion(unpackJson(this.raw) as KubeObject, this.seq));
  }

  get isDecoded(): boolean {
    return this.decoded !== undefined;
  }

  /** The object's JSON: from the bytes without building the tree when it is not decoded (a list of objects nobody read). */
  encode(): Buffer {
    if (!this.decoded) {
      const t = msgpackToJson(this.raw, this.seq);
      if (t) {
        this.noted = { apiVersion: t.apiVersion };
        return t.json;
      }
    }
    return Buffer.from(JSON.stringify(this.obj));
  }

  /** Notes the top-level apiVersion seen while the JSON was written from the bytes elsewhere (a watch batch), so reading it decodes nothing. */
  noteApiVersion(apiVersion: string | undefined): void {
    if (!this.decoded) this.noted ??= { apiVersion };
  }

  get apiVersion(): unknown {
    return this.decoded || !this.noted ? this.obj.apiVersion : this.noted.apiVersion;
  }

  /** The same object with its bytes in a buffer of their own (see View.releaseBuffers). */
  moved(): LazyObject {
    const o = new LazyObject(this.key, this.seq, Buffer.from(this.raw));
    o.decoded = this.decoded;
    o.noted = this.noted;
    if (this.json) o.json = this.json;
    return o;
  }
}

/** What a log entry holds as a stored object: its bytes, when it was read from storage, else its value. */
export function storedOf(e: LogEntry, key: string, seq: number): StoredObject {
  if (e instanceof StoredEntry) return new LazyObject(key, seq, e.bytes, e.start, e.end);
  return e.raw ? new LazyObject(key, seq, e.raw) : { key, seq, obj: e.value as KubeObject };
}

/**
 * The object of s for a one-off look (a background scan of every object): a lazy object not yet
 * read is decoded for the caller and stays bytes in the view.
 */
export const peekObject = (s: StoredObject): KubeObject => (s instanceof LazyObject && !s.isDecoded ? stampVersion(unpackJson(s.raw) as KubeObject, s.seq) : s.obj);

/*
 * The encode-once cache of a stored object, its one owner: only the functions below make and keep
 * StoredObject.json (store/change.ts owns a change's own bytes). The registry hands them to the
 * rooms above (registry/reads.ts), which ask for bytes and never write or choose them.
 */

/** The JSON of s, made once and kept on it for every reader of its version. */
export const encodeStored = (s: StoredObject): Buffer => (s.json ??= encodeObject(s));

/** The JSON of a stored object, kept by nothing (encodeStored keeps it on the object). */
export const encodeObject = (s: StoredObject): Buffer => s.json ?? (s instanceof LazyObject ? s.encode() : Buffer.from(JSON.stringify(s.obj)));

/** obj as JSON at another apiVersion than the one it is stored at (a watcher or reader of another version). */
export const restamped = (obj: KubeObject, apiVersion: string): string => JSON.stringify({ ...obj, apiVersion });

/** The apiVersion an object is stored at; for a lazy object already encoded, without decoding it. */
export const storedApiVersion = (s: StoredObject): unknown => (s instanceof LazyObject ? s.apiVersion : s.obj.apiVersion);

/** The shared JSON of s when it is stored at apiVersion (the common case); undefined when it must be re-stamped. */
export function storedJsonAt(s: StoredObject, apiVersion: string): Buffer | undefined {
  // Encoded first: an object nobody has read is then encoded from its bytes, and its apiVersion
  // known, without decoding it.
  const json = encodeStored(s);
  return storedApiVersion(s) === apiVersion ? json : undefined;
}

/**
 * s as JSON at apiVersion: its shared encoding, else re-stamped. An object written since the start is
 * still its log bytes, which become JSON without being decoded (half the CPU of decoding, then
 * encoding the tree, and no tree kept on the heap), and its writer's answer is then these same bytes.
 */
export const objectJson = (s: StoredObject, apiVersion: string): string | Buffer => storedJsonAt(s, apiVersion) ?? restamped(s.obj, apiVersion);

/**
 * One object of a watch's initial state, encoded for one watcher and kept by nothing: an object still
 * held as bytes is encoded from them (a tree built per object only to be dropped was most of a
 * streaming list's garbage), and JSON a get, list or live event already cached is reused. Caching
 * every object's JSON made a streaming list of the whole store leave as much behind as a plain list
 * (see test/watch/streaming-memory.test.ts).
 */
export function transientJson(s: StoredObject, apiVersion: string): string | Buffer {
  if (s instanceof LazyObject && !s.isDecoded && !s.json) {
    const t = msgpackToJson(s.raw, s.seq);
    if (t && t.apiVersion === apiVersion) return t.json;
  }
  const obj = peekObject(s);
  return obj.apiVersion === apiVersion ? (s.json ?? JSON.stringify(obj)) : restamped(obj, apiVersion);
}

/** The bytes s is still held as, when nothing has decoded it: a background scan looks at them instead of decoding. */
export const undecodedBytes = (s: StoredObject): Buffer | undefined => (s instanceof LazyObject && !s.isDecoded ? s.raw : undefined);

/** An object's msgpack bytes: its own when it was read from storage, else encoded now. */
export const bytesOf = (o: StoredObject): Buffer => (o instanceof LazyObject ? o.raw : packJson(o.obj));
