/**
 * Objects as the door hands them out: stored versions that keep the bytes they were read as, and
 * their JSON at the version a reader asks for, encoded once per version and shared by every reader
 * (serialize once) from those bytes where it can, without building the object tree.
 */
import { msgpackToJson } from '../log/msgpack-json.js';
import type { Change, ChangeType } from '../store/change.js';
import { encodeStored, LazyObject, peekObject, restamped, storedApiVersion, type StoredObject } from '../store/stored-object.js';

/** The store's changes and objects, as watches and reads hand them out: a change's bytes are asked of it (Change.jsonAt, bytes). */
export { peekObject, type Change, type ChangeType, type StoredObject };

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
