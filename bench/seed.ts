/**
 * Fills an orchd data folder with N stored Events quickly, for the scenarios that need a big store
 * (reads at 100k objects, replay of 1M log entries) without spending minutes on HTTP creates.
 *
 * It is still orchd's own data: one Event is created through the API of a real orchd, whose stored
 * record is then cloned (new name, uid, resourceVersion, label) and appended through orchd's own
 * LevelDB log (src/log), in synced batches, after the entries that server wrote. What the server
 * replays is indistinguishable from N creates except for the creation timestamps.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { LevelDbLog } from '../src/log/leveldb-log.js';
import type { LogEntry } from '../src/log/log.js';
import { Child } from './child.js';
import { HttpClient } from './http-client.js';
import { Orchd } from './orchd.js';
import { eventBytes, eventsPath, GROUP_LABEL, GROUPS } from './payload.js';

export interface Seeded {
  dataDir: string;
  /** Name of object i. */
  name: (i: number) => string;
  count: number;
}

export const seedName = (i: number) => `seed-${i}`;

/** The stored record of one Event created through the API of a short-lived orchd on dataDir. */
async function template(cli: string, dataDir: string): Promise<LogEntry> {
  const { orchd, ready } = await Orchd.start({ cli, dataDir });
  try {
    const http = new HttpClient(ready.url, 1);
    const res = await http.request('POST', eventsPath(), eventBytes('seed-template', 0));
    http.close();
    if (res.status !== 201) throw new Error(`seed: template create answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
  } finally {
    await orchd.stop();
  }
  const log = new LevelDbLog({ path: join(dataDir, 'log') });
  await log.open();
  try {
    let found: LogEntry | undefined;
    for await (const page of log.read(0)) for (const e of page) if (e.key.endsWith('/seed-template')) found = e;
    if (!found) throw new Error('seed: the template Event is not in the log');
    return found;
  } finally {
    await log.close();
  }
}

/**
 * Appends `count` Event creates to the log in dataDir (which must not be served meanwhile), from a
 * child process: a load generator that built a million records itself carries their heap into the
 * cells it then measures (its garbage collections cost it over half a core while it read pages, and
 * the pages' latency with it).
 */
export async function seedEvents(cli: string, dataDir: string, count: number, progress?: (done: number) => void): Promise<Seeded> {
  // This module compiled, from the tree that holds the CLI (dist/, or a test's build): tests load it as source.
  const script = join(dirname(cli), '..', 'bench', 'seed.js');
  const child = Child.start('seed', process.execPath, [script, cli, dataDir, String(count)]);
  try {
    await child.waitForLine((line) => {
      const done = /^seeded (\d+)$/.exec(line);
      if (done) progress?.(Number(done[1]));
      return line === 'seeded all';
    }, 1_800_000);
  } finally {
    await child.stop();
  }
  return { dataDir, name: seedName, count };
}

async function seedHere(cli: string, dataDir: string, count: number, progress: (done: number) => void): Promise<void> {
  const t = await template(cli, dataDir);
  const stored = t.value as { metadata: Record<string, unknown> } & Record<string, unknown>;
  const keyPrefix = t.key.slice(0, t.key.length - 'seed-template'.length);
  const log = new LevelDbLog({ path: join(dataDir, 'log') });
  await log.open();
  try {
    const CHUNK = 5000;
    for (let from = 0; from < count; from += CHUNK) {
      let last: Promise<number> | undefined;
      for (let i = from; i < Math.min(count, from + CHUNK); i++) {
        const name = seedName(i);
        last = log.append({
          type: 'put',
          key: keyPrefix + name,
          value: {
            ...stored,
            metadata: {
              ...stored.metadata,
              name,
              uid: randomUUID(),
              labels: { [GROUP_LABEL]: `g${i % GROUPS}`, app: 'orchd-bench' },
            },
          },
        }).durable;
      }
      await last;
      progress(Math.min(count, from + CHUNK));
    }
  } finally {
    await log.close();
  }
}

// The child: `node seed.js CLI DATA_DIR COUNT`, saying `seeded N` as it goes and `seeded all` at the end.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [cli, dataDir, count] = process.argv.slice(2);
  await seedHere(cli, dataDir, Number(count), (done) => console.log(`seeded ${done}`));
  console.log('seeded all');
}
