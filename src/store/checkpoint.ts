import { Packr, Unpackr } from 'msgpackr';
import type { Checkpoint } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import { KeyIndex } from './key-index.js';
import { splitKey } from './keys.js';
import { SortedKeys } from './sorted-keys.js';
import { View } from './view.js';

// Plain maps only: the checkpoint must round-trip JSON objects exactly, whatever their shape.
const packr = new Packr({ useRecords: false, moreTypes: false });
/**
 * msgpackr renames an own "__proto__" key to "__proto_" when it builds an object (its guard against
 * prototype pollution), yet JSON.parse makes such keys and the log keeps them (src/log/codec.ts). A
 * checkpoint that holds the name anywhere is decoded into Maps and rebuilt with defineProperty, so a
 * restart from it serves the same bytes as a replay of the log would.
 */
const mapReader = new Unpackr({ useRecords: false, moreTypes: false, mapsAsObjects: false });
const PROTO = Buffer.from('__proto__', 'latin1');

function unpackExact(data: Uint8Array): unknown {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // indexOf is a native scan, a small fraction of the cost of unpacking the same bytes.
  if (bytes.indexOf(PROTO) === -1) return packr.unpack(bytes);
  return fromMaps(mapReader.unpack(bytes));
}

function fromMaps(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(fromMaps);
  if (!(v instanceof Map)) return v;
  const o: Record<string, unknown> = {};
  for (const [k, x] of v) Object.defineProperty(o, String(k), { value: fromMaps(x), enumerable: true, writable: true, configurable: true });
  return o;
}

interface Encoded {
  seq: number;
  objects: [string, number, KubeObject][];
  revs: [string, number[]][];
}

/** The view as of its applied sequence, so a restart replays only the log's tail. */
export function encodeCheckpoint(view: View): Checkpoint {
  const objects: Encoded['objects'] = [];
  for (const o of view.objects.values()) objects.push([o.key, o.seq, o.obj]);
  const data: Encoded = { seq: view.appliedSeq, objects, revs: [...view.keyIndex.entries()] };
  return { seq: view.appliedSeq, data: packr.pack(data) };
}

export function decodeCheckpoint(cp: Checkpoint): View {
  const data = unpackExact(cp.data) as Encoded;
  const view = new View();
  const suffixes = new Map<string, string[]>();
  for (const [key, seq, obj] of data.objects) {
    view.objects.set(key, { key, seq, obj });
    const { collection, suffix } = splitKey(key);
    const list = suffixes.get(collection);
    if (list) list.push(suffix);
    else suffixes.set(collection, [suffix]);
  }
  for (const [collection, list] of suffixes) view.collections.set(collection, SortedKeys.of(list));
  view.keyIndex = KeyIndex.from(data.revs);
  const history = new Map<string, string[]>();
  for (const [key] of data.revs) {
    const { collection, suffix } = splitKey(key);
    const list = history.get(collection);
    if (list) list.push(suffix);
    else history.set(collection, [suffix]);
  }
  for (const [collection, list] of history) view.history.set(collection, SortedKeys.of(list));
  view.appliedSeq = data.seq;
  return view;
}
