/**
 * The replay's log (src/timetravel/replay/log.ts) through the log contract. A replay's entries are
 * written once, by the recording, and the replay reveals them in order (commit()): here the
 * recording is a MemoryLog, each batch it commits is revealed at once, and every read, get,
 * committed$ and close is the ReplayLog's.
 */
import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LogError, type Log, type LogRecord } from '../../src/log/log.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { ReplayLog } from '../../src/timetravel/replay/log.js';
import { runLogContract } from '../log/contract.js';

/** A recording being replayed as it is written: appends go to the recording, all else is the replay's. */
class RecordingReplayed implements Log {
  readonly shared = false;
  constructor(
    private readonly recording: MemoryLog,
    readonly replay: ReplayLog,
  ) {
    recording.committed$.subscribe((batch) => replay.commit(batch));
  }
  get lastSeq(): number {
    return this.replay.lastSeq;
  }
  get firstSeq(): number {
    return this.replay.firstSeq;
  }
  get committed$(): Observable<never> {
    return this.replay.committed$ as Observable<never>;
  }
  open = () => this.replay.open();
  append = (r: LogRecord) => this.recording.append(r);
  read: Log['read'] = (from, to, opts) => this.replay.read(from, to, opts);
  get: Log['get'] = (seq, key) => this.replay.get(seq, key);
  compact: Log['compact'] = (below, keep) => this.replay.compact(below, keep);
  saveCheckpoint: Log['saveCheckpoint'] = (cp) => this.replay.saveCheckpoint(cp);
  loadCheckpoint: Log['loadCheckpoint'] = () => this.replay.loadCheckpoint();
  async close(): Promise<void> {
    await this.recording.close();
    await this.replay.close();
  }
}

async function replayed(): Promise<RecordingReplayed> {
  const recording = new MemoryLog();
  await recording.open();
  const replay = new ReplayLog([], 1, { entries: (from, to) => recording.read(from, to), entry: (seq) => recording.get(seq) });
  await replay.open();
  return new RecordingReplayed(recording, replay);
}

runLogContract({
  name: 'ReplayLog',
  newLog: replayed,
  skip: {
    reopen: 'a replay is never restarted: its store is rebuilt from the recording each time',
    breakStorage: 'a replay writes nothing: its storage is the recording',
    compaction: 'the recording is the history a replay shows: it is never compacted',
    checkpoints: 'the store a replay serves is never restarted, so nothing is checkpointed',
  },
});

describe('ReplayLog of its own', () => {
  it('refuses an append, and reads the state below `from` only as kept entries', async () => {
    const state = [
      { seq: 2, type: 'put' as const, key: 'a', value: { v: 2 } },
      { seq: 5, type: 'put' as const, key: 'b', value: { v: 5 } },
    ];
    const log = new ReplayLog(state, 7, { entries: async function* () {}, entry: async () => undefined });
    expect(() => log.append()).toThrow(LogError);
    await log.open();
    expect([log.firstSeq, log.lastSeq]).toEqual([7, 6]);
    expect(() => log.append()).toThrow(/takes no writes/);
    const kept = [];
    for await (const page of log.read(1, undefined, { kept: true })) kept.push(...page);
    expect(kept.map((e) => e.seq)).toEqual([2, 5]);
    expect((await log.get(5))?.key).toBe('b');
    await log.close();
  });
});
