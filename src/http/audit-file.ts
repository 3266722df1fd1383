/**
 * The audit log as `--audit-log-path` writes it: one audit.k8s.io Event per line of JSON, appended
 * to the file (or to stdout for `-`, as kube-apiserver takes it), for the requests the policy
 * selects (`--audit-policy-file`; without one, every request at Metadata).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { METADATA_FOR_ALL, type AuditPolicy } from '../config/audit-policy.js';
import type { AuditSink } from './audit-log.js';

export class AuditFile implements AuditSink {
  private readonly out: WriteStream | NodeJS.WriteStream;

  private constructor(
    path: string,
    readonly policy: AuditPolicy,
  ) {
    this.out = path === '-' ? process.stdout : createWriteStream(path, { flags: 'a' });
  }

  /** The audit log at path, once it is open for appending (a folder that is missing or not writable fails the start). */
  static async open(path: string, policy: AuditPolicy = METADATA_FOR_ALL): Promise<AuditFile> {
    const file = new AuditFile(path, policy);
    if (file.out !== process.stdout) {
      await new Promise<void>((resolve, reject) => {
        (file.out as WriteStream).once('open', () => resolve());
        file.out.once('error', (err: Error) => reject(new Error(`--audit-log-path ${path}: ${err.message}`)));
      });
    }
    return file;
  }

  write(event: Record<string, unknown>): void {
    this.out.write(JSON.stringify(event) + '\n');
  }

  /** Writes what is buffered and closes the file. */
  close(): Promise<void> {
    if (this.out === process.stdout) return Promise.resolve();
    return new Promise((resolve) => (this.out as WriteStream).end(resolve));
  }
}
