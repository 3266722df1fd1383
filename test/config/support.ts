import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentKind } from '../../src/config/document.js';
import { loadDocumentText, type LoadResult } from '../../src/config/load.js';

export interface Checked<T> {
  result: LoadResult<T>;
  /** [type, field] of every field error, in report order. */
  errors: [string, string][];
  /** The printed lines without the file name. */
  messages: string[];
  value?: T;
}

/** Loads a document given as an object (sent as JSON) or as text (YAML or JSON). */
export function check<T>(kind: DocumentKind<T>, doc: object | string, file = join(tmpdir(), 'config.yaml')): Checked<T> {
  const text = typeof doc === 'string' ? doc : JSON.stringify(doc);
  const result = loadDocumentText(file, text, kind);
  if (result.ok) return { result, errors: [], messages: [], value: result.document.value };
  return {
    result,
    errors: result.problems.flatMap((p) => (p.error ? [[p.error.type, p.error.field] as [string, string]] : [])),
    messages: result.problems.map((p) => p.message),
  };
}

export const clone = <T>(v: T): T => structuredClone(v);

export function writeFile(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A self-signed certificate and its key (and a second, unrelated key) made by openssl. */
export function makeCertificate(dir: string): { cert: string; key: string; otherKey: string; certPem: string } {
  const cert = join(dir, 'server.crt');
  const key = join(dir, 'server.key');
  const otherKey = join(dir, 'other.key');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  execFileSync('openssl', ['req', '-x509', ...ec, '-keyout', key, '-out', cert, '-days', '30', '-subj', '/CN=orchd-test'], { stdio: 'ignore' });
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', otherKey], { stdio: 'ignore' });
  return { cert, key, otherKey, certPem: readFileSync(cert, 'utf8') };
}
