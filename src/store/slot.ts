import { Revisions } from './key-index.js';
import type { StoredObject } from './stored-object.js';

/** What the view knows of one key: the log entries that wrote it, and its current object (none once deleted). */
export class Slot extends Revisions {
  constructor(
    last: number,
    public cur: StoredObject | undefined,
  ) {
    super(last);
  }
}
