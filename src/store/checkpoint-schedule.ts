import type { Log } from '../log/log.js';
import { encodeCheckpoint, type ReadRevision } from './checkpoint-format.js';
import type { View } from './view.js';

/**
 * When the view is saved as a checkpoint (checkpoint-format.ts holds the format): every `every` applied
 * entries, and when asked (compaction needs one at or past its horizon), one save at a time.
 */
export class CheckpointSchedule {
  private saving: Promise<void> | undefined;
  private since = 0;
  /** The version of the newest saved checkpoint (0: none): compaction may not pass it. */
  savedSeq = 0;
  /**
   * The pass reading the objects the start's checkpoint along the log named and no part read yet
   * (recovery.ts readUnread): a save waits for it rather than read each of them by a seek.
   */
  unread: Promise<void> | undefined;

  constructor(
    private readonly log: Log,
    private readonly view: () => View,
    private readonly read: ReadRevision,
    private readonly every: number,
  ) {}

  /** n more entries were applied: a checkpoint is due every `every` of them. */
  counted(n: number): void {
    this.since += n;
    if (this.since >= this.every && !this.saving) void this.save();
  }

  /** Saves the view as of now; the next start replays only what comes after. Joins a save on its way. */
  save(): Promise<void> {
    if (this.saving) return this.saving;
    this.since = 0;
    this.saving = (async () => {
      await this.unread;
      const view = this.view();
      // Between checkpoints, writes leave pages and parts that objects were read from mostly dead.
      await view.releaseBuffers();
      const cp = encodeCheckpoint(view, this.read);
      await this.log.saveCheckpoint(cp);
      this.savedSeq = cp.seq;
    })().finally(() => (this.saving = undefined));
    return this.saving;
  }

  /** A save that starts now, not one already on its way from an older version. */
  async fresh(): Promise<void> {
    if (this.saving) await this.saving;
    await this.save();
  }

  /** Settles once the save on its way (if any) is over. */
  get idle(): Promise<void> {
    return (this.saving ?? Promise.resolve()).catch(() => undefined);
  }
}
