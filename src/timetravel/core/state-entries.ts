/** The state of a history at a version as log entries to import (LevelDbLog.import): what a replay's served log and a fork start from. */
import { packJson } from '../../log/codec.js';
import type { ImportedEntry } from '../../log/leveldb-log.js';
import { everyKindAt } from './custom-kinds.js';
import { stateInPages, type History } from './history.js';

/** The state at rv as entries to import: each object's stored bytes at the version that wrote it. */
export async function* stateEntries(h: History, rv: number): AsyncIterable<ImportedEntry[]> {
  if (rv <= 0) return;
  for await (const page of stateInPages(h, rv, { kinds: await everyKindAt(h, rv) })) {
    yield page.map((s) => ({ seq: s.seq ?? Number(s.object.metadata.resourceVersion), type: 'put' as const, key: s.key, raw: s.msgpack?.() ?? packJson(s.object) }));
  }
}
