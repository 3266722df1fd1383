/**
 * The audit log as `--audit-log-path` writes it: one audit.k8s.io Event per line of JSON, appended
 * to the file (or to stdout for `-`, as kube-apiserver takes it), for the requests the policy
 * selects (`--audit-policy-file`; without one, every request at Metadata).
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { METADATA_FOR_ALL, type AuditPolicy } from '../config/audit-policy.js';
import type { AuditSink } from './audit-log.js';

export class AuditFile implements AuditSink {
  private readonly out: WriteStream | NodeJS.WriteStream;

  private constructor(
    out: WriteStream | NodeJS.WriteStream,
    readonly policy: AuditPolicy,
  ) {
    this.out = out;
  }

  /** The audit log at path, opened for appending now: a folder that is missing or not writable fails the start. */
  static open(path: string, policy: AuditPolicy = METADATA_FOR_ALL): AuditFile {
    if (path === '-') return new AuditFile(process.stdout, policy);
    let fd: number;
    try {
      fd = openSync(path, 'a');
    } catch (err) {
      throw new Error(`--audit-log-path ${path}: ${(err as Error).message}`);
    }
    return new AuditFile(createWriteStream('', { fd }), policy);
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
