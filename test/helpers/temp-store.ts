/** A started Store on a real LevelDB log in a temp folder, removed after the test file. */
import { join } from 'node:path';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from './temp.js';

export async function tempStore(prefix = 'orchd-store-'): Promise<{ dir: string; log: LevelDbLog; store: Store }> {
  const dir = tempDir(prefix, { until: 'file' });
  const log = new LevelDbLog({ path: join(dir, 'log') });
  await log.open();
  const store = new Store({ log });
  await store.start();
  return { dir, log, store };
}
