/**
 * Re-encrypts every stored object with the current first provider of its resource, so a key that is
 * no longer first can then be removed from the EncryptionConfiguration (Kubernetes does this with
 * `kubectl get secrets -A -o json | kubectl replace -f -`). Offline: run it on the data folder of a
 * stopped server (LevelDB's lock refuses a running one), with the configuration the server will use.
 *
 *   orchd rewrite-encryption --data-dir DIR --encryption-provider-config enc.yaml [--keep-history]
 *
 * Each object is written again through the log (a new resourceVersion, the same content), then a
 * checkpoint is saved and, unless --keep-history, the history before the rewrite is compacted away:
 * old log entries are still sealed with the old keys, and a watch or list at an old version would
 * need them. Objects that no configured key opens are listed and left as they are (exit code 1).
 */
import { join } from 'node:path';
import { command, CommandError, nonEmpty, UsageError, type Flags } from './flags.js';
import type { EncryptionConfiguration } from '../config/encryption.js';
import { COMMAND_KMS_WAIT_MS, encryptAtRest } from '../log/encryption/index.js';
import { LevelDbLog } from '../log/leveldb-log.js';
import { Store } from '../store/store.js';
import { encryptionFrom } from '../timetravel/core/source.js';

export interface RewriteResult {
  rewritten: number;
  /** Keys whose stored data no configured provider opens, with why. */
  corrupt: { key: string; message: string }[];
  /** The log's first readable seq afterwards. */
  firstSeq: number;
  lastSeq: number;
}

export async function rewriteEncryption(opts: { dataDir: string; config: EncryptionConfiguration; keepHistory?: boolean; kmsWaitMs?: number }): Promise<RewriteResult> {
  const log = encryptAtRest(new LevelDbLog({ path: join(opts.dataDir, 'log') }), opts.config);
  await log.open();
  const store = new Store({ log });
  try {
    // Values sealed by a KMS plugin read back only through it.
    const waitMs = opts.kmsWaitMs ?? COMMAND_KMS_WAIT_MS;
    if (!(await log.ready(waitMs)))
      throw new CommandError(
        `the KMS plugins did not answer within ${waitMs} ms: ${log
          .health()
          .map((h) => h.problem)
          .join('; ')}`,
      );
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

const FLAGS = {
  'data-dir': { value: 'DIR', help: 'the data folder of a stopped orchd (required)', parse: nonEmpty },
  'encryption-provider-config': { value: 'FILE', help: 'the EncryptionConfiguration the server will use (required)', parse: nonEmpty },
  'keep-history': { help: 'keep the history before the rewrite (its entries stay sealed with the old keys)' },
} as const satisfies Flags;

export const rewriteEncryptionCommand = command({
  name: 'rewrite-encryption',
  summary: 'Re-encrypt every stored object with the first provider of the encryption configuration, offline, so an old key can be removed.',
  flags: FLAGS,
  notes: 'Objects that no configured key opens are listed and left as they are (exit status 1).',
  async run({ values }, io) {
    const dataDir = values['data-dir'];
    const file = values['encryption-provider-config'];
    if (!dataDir || !file) throw new UsageError('--data-dir and --encryption-provider-config are required');
    const config = (await encryptionFrom(file))!;
    const result = await rewriteEncryption({ dataDir, config, keepHistory: values['keep-history'] });
    io.out.write(`rewrote ${result.rewritten} objects; log now holds versions ${result.firstSeq}..${result.lastSeq}\n`);
    for (const c of result.corrupt) io.err.write(`cannot read ${c.key}: ${c.message} (left as it is)\n`);
    return result.corrupt.length > 0 ? 1 : 0;
  },
});
