/**
 * An entry's writer as the time-travel tools print it (src/timetravel/core/entry-writers.ts): each
 * distinct writer decoded once, not once per entry (history prints a thousand versions of one writer).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { LogEntry } from '../../src/log/log.js';
import { writersOf } from '../../src/timetravel/core/entry-writers.js';
import { tempDir } from '../helpers/temp.js';

describe('writersOf', () => {
  it('gives each distinct writer once, shared by the entries that stored the same bytes', async () => {
    const log = new LevelDbLog({ path: join(tempDir('orchd-writers-'), 'log') });
    await log.open();
    try {
      const alice = { user: 'alice', verb: 'patch', manager: 'kubectl' };
      const bob = { user: 'bob', verb: 'update', manager: 'ctrl' };
      const key = 'events.orch.io/events/default/e1';
      for (const writer of [alice, alice, bob, undefined]) await log.append({ type: 'put', key, value: { metadata: { name: 'e1' } }, ...(writer ? { writer } : {}) }).durable;
      const entries: LogEntry[] = [];
      for await (const page of log.read(1)) entries.push(...page);
      const writer = writersOf();
      const [a1, a2, b, none] = entries.map(writer);
      expect([a1, b, none]).toEqual([alice, bob, undefined]);
      expect(a2).toBe(a1);
    } finally {
      await log.close();
    }
  });
});
