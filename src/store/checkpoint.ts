import { packJson, unpackJson } from '../log/codec.js';
import type { Checkpoint } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import { KeyIndex } from './key-index.js';
import { splitKey } from './keys.js';
import { SortedKeys } from './sorted-keys.js';
import { View } from './view.js';

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
  return { seq: view.appliedSeq, data: packJson(data) };
}

export function decodeCheckpoint(cp: Checkpoint): View {
  const data = unpackJson(Buffer.from(cp.data.buffer, cp.data.byteOffset, cp.data.byteLength)) as Encoded;
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
