/**
 * When each recorded log entry is due in a replay: at its commit time, which the log keeps (ms). A log
 * written before it kept times gives none, so there a write's time is read from the times the server
 * itself stamped into the object: metadata.creationTimestamp,
 * metadata.deletionTimestamp and managedFields[].time (which moves on every write that changes a
 * manager's fields). Client-set times (an Event's eventTime, lastTimestamp) are not used: they are
 * whatever the client's clock said.
 *
 * These times have a resolution of one second, and none of them is ever later than the write that
 * stored the object, so the pace is honest to the second: entries whose newest time is one second
 * apart are sent one second apart (a tenth of it at 10×), entries within the same second go back to
 * back. An entry that carries no newer time (a delete, whose value is the object's last state; an
 * update that changed no manager's fields) is sent right after the one before it.
 *
 * Worked example at speed 10: entries stamped 12:00:00, 12:00:00, 12:00:03, (a delete, stamped
 * 12:00:03 or older), 12:00:05 are due at 0, 0, 300, 300 and 500 ms after the replay starts.
 */

import { stampedTimeMs } from '../../store/versions.js';

/** `max` sends every entry as soon as the one before it is durable (and its watchers have sent the page before: replay.ts). */
export type Speed = number | 'max';

/** Parses --speed: a positive number (1, 10, 0.5) or `max`. */
export function parseSpeed(text: string): Speed {
  if (text === 'max') return 'max';
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) throw new Error(`must be a positive number or max, not ${JSON.stringify(text)}`);
  return n;
}

export { stampedTimeMs };

/**
 * Feeds entries in log order and says how long after the replay's start each is due. Times never go
 * backwards: an entry stamped earlier than one before it is due with it.
 */
export class Pacer {
  private first: number | undefined;
  private newest: number | undefined;

  constructor(private readonly speed: Speed) {}

  /**
   * ms after the start at which the entry holding value is due (0 at max speed): by its commit time
   * when the log kept one, else by the times stamped into value.
   */
  dueMs(value: unknown, commitTime?: number): number {
    const t = commitTime ?? stampedTimeMs(value);
    if (t !== undefined) {
      this.first ??= t;
      this.newest = Math.max(this.newest ?? t, t);
    }
    if (this.speed === 'max' || this.first === undefined) return 0;
    return (this.newest! - this.first) / this.speed;
  }

  /** The recorded span so far: the newest stamped time less the first (ms, at speed 1). */
  get spanMs(): number {
    return this.first === undefined ? 0 : this.newest! - this.first;
  }
}
