/**
 * One version of one object as the view and every reader hold it: a plain object, or a LazyObject
 * that keeps the bytes it was read from storage as and decodes or encodes them on first use.
 */
import { StoredEntry, unpackJson } from '../log/codec.js';
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

export const encodeStored = (s: StoredObject): Buffer => (s.json ??= encodeObject(s));

/** The JSON of a stored object, kept by nothing (encodeStored keeps it on the object). */
export const encodeObject = (s: StoredObject): Buffer => s.json ?? (s instanceof LazyObject ? s.encode() : Buffer.from(JSON.stringify(s.obj)));

/** The apiVersion an object is stored at; for a lazy object already encoded, without decoding it. */
/** obj as JSON at another apiVersion than the one it is stored at (a watcher or reader of another version). */
export const restamped = (obj: KubeObject, apiVersion: string): string => JSON.stringify({ ...obj, apiVersion });

export const storedApiVersion = (s: StoredObject): unknown => (s instanceof LazyObject ? s.apiVersion : s.obj.apiVersion);
