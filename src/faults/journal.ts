/**
 * The journal of faults injected: what api.faults.injected(), /debug/faults and `orchd log --faults`
 * read. A fault is never a log entry and never takes a resourceVersion; each record carries the head
 * seq when it acted instead, so history can show it after the write it followed. With a data folder
 * the records are appended to FAULT_JOURNAL_FILE beside the log, one JSON line each, so the
 * time-travel tools find them in a stopped folder.
 */
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export const FAULT_JOURNAL_FILE = 'faults.jsonl';

export interface InjectedFault {
  /** When it acted (RFC 3339, milliseconds): for people; decisions never read the clock. */
  time: string;
  /** The newest resourceVersion applied when it acted: the fault came after that write. */
  resourceVersion: string;
  /** The rule's name, or `rules[i]`. */
  rule: string;
  ruleIndex: number;
  /** The request's ordinal among those the rule matched (from 0). */
  ordinal: number;
  /** `status:409`, `latency`, `watch:expire`, `watch:drop`, `watch:reset`, `watch:lag`, `commitThenDrop`, `staleRead`. */
  fault: string;
  request: {
    verb: string;
    /** `plural` or `plural.group`. */
    resource: string;
    namespace?: string;
    name?: string;
    subresource?: string;
    user: string;
    userAgent?: string;
  };
  /** What was drawn or done: the delay, the version a stale read answered at, the events a watch had sent. */
  detail?: { latencyMs?: number; readAt?: string; afterEvents?: number };
}

/** Records kept in memory; past it the oldest go (the file keeps every one). */
const MEMORY_BOUND = 100_000;

export class FaultJournal {
  private readonly records: InjectedFault[] = [];
  private readonly file?: WriteStream;

  constructor(dataDir?: string) {
    if (dataDir !== undefined) this.file = createWriteStream(join(dataDir, FAULT_JOURNAL_FILE), { flags: 'a' });
  }

  add(f: InjectedFault): void {
    if (this.records.length >= MEMORY_BOUND) this.records.shift();
    this.records.push(f);
    this.file?.write(`${JSON.stringify(f)}\n`);
  }

  /** Drops the records kept in memory; the file keeps them. */
  forget(): void {
    this.records.length = 0;
  }

  list(): InjectedFault[] {
    return this.records.map((r) => structuredClone(r));
  }

  close(): Promise<void> {
    const file = this.file;
    return file ? new Promise((resolve) => file.end(resolve)) : Promise.resolve();
  }
}

/** The journal a data folder holds (none: []), for the time-travel tools. A torn last line (a crash mid-write) is skipped. */
export function readFaultJournal(dataDir: string): InjectedFault[] {
  let text: string;
  try {
    text = readFileSync(join(dataDir, FAULT_JOURNAL_FILE), 'utf8');
  } catch {
    return [];
  }
  const out: InjectedFault[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      out.push(JSON.parse(line) as InjectedFault);
    } catch {
      // Only the last line can be torn; anything after it would be too.
    }
  }
  return out;
}
