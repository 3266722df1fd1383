/**
 * Re-encrypts every stored object with the current first provider of its resource, so a key that is
 * no longer first can then be removed from the EncryptionConfiguration (Kubernetes does this with
 * `kubectl get secrets -A -o json | kubectl replace -f -`). Offline: run it on the data folder of a
 * stopped server (LevelDB's lock refuses a running one), with the configuration the server will use.
 *
 *   node dist/tools/rewrite-encryption.js --data-dir DIR --encryption-provider-config enc.yaml [--keep-history]
 *
 * Each object is written again through the log (a new resourceVersion, the same content), then a
 * checkpoint is saved and, unless --keep-history, the history before the rewrite is compacted away:
 * old log entries are still sealed with the old keys, and a watch or list at an old version would
 * need them. Objects that no configured key opens are listed and left as they are (exit code 1).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { EncryptionConfiguration } from '../src/config/encryption.js';
import { problemLine } from '../src/config/load.js';
import { loadServerConfig } from '../src/config/server-config.js';
import { encryptAtRest } from '../src/log/encryption/index.js';
import { LevelDbLog } from '../src/log/leveldb-log.js';
import { Store } from '../src/store/store.js';

export interface RewriteResult {
  rewritten: number;
  /** Keys whose stored data no configured provider opens, with why. */
  corrupt: { key: string; message: string }[];
  /** The log's first readable seq afterwards. */
  firstSeq: number;
  lastSeq: number;
}

/** How long the tool waits for KMS plugins to answer before it gives up. */
const KMS_WAIT_MS = 30_000;

export async function rewriteEncryption(opts: { dataDir: string; config: EncryptionConfiguration; keepHistory?: boolean; kmsWaitMs?: number }): Promise<RewriteResult> {
  const log = encryptAtRest(new LevelDbLog({ path: join(opts.dataDir, 'log') }), opts.config);
  await log.open();
  const store = new Store({ log });
  try {
    // Values sealed by a KMS plugin read back only through it.
    const waitMs = opts.kmsWaitMs ?? KMS_WAIT_MS;
    if (!(await log.ready(waitMs))) throw new Error(`the KMS plugins did not answer within ${waitMs} ms: ${log.health().map((h) => h.problem).join('; ')}`);
    await store.start();
    let rewritten = 0;
    // A snapshot of the keys: each rewrite adds a version of the key it writes.
    for (const s of [...store.view.objects()]) {
      await store.put(s.key, structuredClone(s.obj), { seq: s.seq });
      rewritten++;
    }
    await store.checkpoint();
    if (!opts.keepHistory) await store.compact(log.lastSeq + 1);
    const corrupt = [...log.corrupt.entries()].map(([key, c]) => ({ key, message: c.message }));
    return { rewritten, corrupt, firstSeq: log.firstSeq, lastSeq: log.lastSeq };
  } finally {
    await store.close();
    await log.close();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      'encryption-provider-config': { type: 'string' },
      'keep-history': { type: 'boolean', default: false },
    },
  });
  const dataDir = values['data-dir'];
  const file = values['encryption-provider-config'];
  if (!dataDir || !file) {
    process.stderr.write('usage: rewrite-encryption --data-dir DIR --encryption-provider-config FILE [--keep-history]\n');
    return 2;
  }
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) {
    for (const p of loaded.problems) process.stderr.write(problemLine(p) + '\n');
    return 2;
  }
  const result = await rewriteEncryption({ dataDir, config: loaded.config.encryption!.value, keepHistory: values['keep-history'] });
  process.stdout.write(`rewrote ${result.rewritten} objects; log now holds versions ${result.firstSeq}..${result.lastSeq}\n`);
  for (const c of result.corrupt) process.stderr.write(`cannot read ${c.key}: ${c.message} (left as it is)\n`);
  return result.corrupt.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`rewrite-encryption: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
