/**
 * Reading one configuration file: YAML or JSON (JSON is YAML), exactly one document, an apiVersion
 * and kind this server knows, the fields that version declares (unknown fields and wrong types are
 * errors, as in Kubernetes' strict decoding), then the kind's own reader, which converts either group
 * version to the internal form and validates it. Every problem is collected, each with its field path.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { FieldPath, forbidden, formatFieldError, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isObject } from '../api/json-access.js';
import { findTypeErrors, findUnknownFields } from '../api/unknown-fields.js';
import { GROUP_VERSIONS, type DocumentKind, type GroupVersion } from './document.js';

/** One thing wrong with a file; `error` is set when it concerns a field of the document. */
export interface ConfigProblem {
  file: string;
  error?: FieldError;
  /** The line printed after `<file>: `, e.g. `jwt[0].claimMappings.username.prefix: Required value`. */
  message: string;
}

export const problemLine = (p: ConfigProblem): string => `${p.file}: ${p.message}`;
const fieldProblem = (file: string, error: FieldError): ConfigProblem => ({ file, error, message: formatFieldError(error) });

/** A document as read: where from, in which version, and its internal form. */
export interface LoadedDocument<T> {
  file: string;
  apiVersion: GroupVersion;
  value: T;
}

export type LoadResult<T> = { ok: true; document: LoadedDocument<T> } | { ok: false; problems: ConfigProblem[] };

/** Parses text that must hold one YAML or JSON object. */
export function parseDocumentText(text: string): { value?: unknown; errors: string[] } {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  // An empty document (a file of comments, or a trailing `---`) is no document.
  const list = [...docs].filter((d) => d.contents !== null || d.errors.length > 0);
  const errors = list.flatMap((d) => d.errors.map((e) => e.message.split('\n')[0].replace(/:$/, '')));
  if (errors.length > 0) return { errors };
  if (list.length === 0) return { errors: ['the file holds no document'] };
  if (list.length > 1) return { errors: [`the file holds ${list.length} documents; one is expected`] };
  return { value: list[0].toJS(), errors: [] };
}

/** Loads a file that must hold a document of `kind` (in any group version that kind has). */
export function loadDocumentText<T>(file: string, text: string, kind: DocumentKind<T>): LoadResult<T> {
  const fail = (...messages: string[]): LoadResult<T> => ({ ok: false, problems: messages.map((message) => ({ file, message })) });
  const parsed = parseDocumentText(text);
  if (parsed.errors.length > 0) return fail(...parsed.errors);
  const doc = parsed.value;
  if (!isObject(doc)) return fail('the document must be an object with apiVersion and kind');

  const root = FieldPath.root('');
  const header: FieldError[] = [];
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const docKind = typeof doc.kind === 'string' ? doc.kind : '';
  const known = kind.groupVersions ?? GROUP_VERSIONS;
  const versions = known.filter((v) => kind.schemas[v]);
  if (apiVersion === '') header.push(required(root.child('apiVersion')));
  else if (!(known as readonly string[]).includes(apiVersion)) header.push(notSupported(root.child('apiVersion'), apiVersion, known));
  if (docKind === '') header.push(required(root.child('kind')));
  else if (docKind !== kind.kind) header.push(notSupported(root.child('kind'), docKind, [kind.kind]));
  else if (apiVersion && (known as readonly string[]).includes(apiVersion) && !kind.schemas[apiVersion as GroupVersion]) {
    header.push(notSupported(root.child('apiVersion'), apiVersion, versions));
  }
  if (header.length > 0) return { ok: false, problems: header.map((e) => fieldProblem(file, e)) };

  const version = apiVersion as GroupVersion;
  const schema = kind.schemas[version]!;
  const typeErrors = findTypeErrors(doc, schema);
  const unknown = findUnknownFields(doc, schema).map((u) => forbidden(FieldPath.root(u.path), `unknown field in ${version} ${kind.kind}`));
  // A value of the wrong type cannot be read, so Kubernetes stops at decoding; so do we.
  if (typeErrors.length > 0) return { ok: false, problems: [...typeErrors, ...unknown].map((e) => fieldProblem(file, e)) };

  const { value, errors } = kind.read(doc, { apiVersion: version, baseDir: dirname(resolve(file)) }, root);
  const all = [...unknown, ...errors];
  if (all.length > 0) return { ok: false, problems: all.map((e) => fieldProblem(file, e)) };
  return { ok: true, document: { file, apiVersion: version, value } };
}

export function loadDocumentFile<T>(file: string, kind: DocumentKind<T>): LoadResult<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { ok: false, problems: [{ file, message: `unable to read the file: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}` }] };
  }
  return loadDocumentText(file, text, kind);
}
