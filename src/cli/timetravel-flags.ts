/**
 * The flags every time-travel command shares: where it reads its history (exactly one of a data
 * folder, a running server or a recording), what it reads of it, whose changes, and how it prints.
 * One table each; what they mean is src/timetravel/core/source.ts's.
 */
import { parseVersionSpec } from '../timetravel/core/version-spec.js';
import type { Flags } from './flags.js';

/** A server's address: host:port alone is http://host:port, as kubectl reads a --server without TLS settings. */
function serverUrl(text: string): string {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${JSON.stringify(text)} is not a URL (http://HOST:PORT)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${JSON.stringify(text)}: give an http:// or https:// URL`);
  return url;
}

export const SOURCE = {
  'data-dir': { value: 'DIR', help: "an orchd's data folder, of a stopped or a running server (a snapshot of its log is read)" },
  server: { value: 'URL', help: 'a running orchd, read through its API (http:// when no scheme is given, as kubectl takes it)', parse: serverUrl },
  file: { value: 'RECORDING', short: 'f', help: 'a recording made by orchd export' },
  'encryption-provider-config': { value: 'FILE', help: 'the EncryptionConfiguration the data folder was written with, when it is encrypted at rest' },
} as const satisfies Flags;

export const FILTERS = {
  kind: {
    value: 'KIND',
    multiple: true,
    help: 'only this kind (as kubectl names it: events, ns, validatingadmissionpolicies.admissionregistration.orch.io, or a kind a CustomResourceDefinition of the versions read defines: webapps, wa, webapps.v1.apps.example.com); repeat or comma-separate for several',
  },
  namespace: { value: 'NS', short: 'n', help: 'only objects in this namespace' },
  selector: { value: 'SELECTOR', short: 'l', help: 'only objects whose labels match (app=x, tier in (a,b), !gone)' },
} as const satisfies Flags;

/** Whose changes: the writer the log kept with each entry. */
export const WHO = {
  user: { value: 'USER', help: 'only changes this user made (the authenticated user the log kept with each entry)' },
  manager: { value: 'MANAGER', help: 'only changes made with this field manager (fieldManager, or the client the server named from its user agent)' },
} as const satisfies Flags;

/** How objects are printed as YAML or diffed. */
export const SHOW = {
  'show-managed-fields': { help: 'keep metadata.managedFields in YAML and diffs (left out by default, as kubectl does)' },
} as const satisfies Flags;

/** A version flag: a resourceVersion or a time. */
export const version = (help: string) => ({ value: 'RV|TIME|HEAD', help, parse: parseVersionSpec }) as const;

export const TIME_NOTE = 'TIME is RFC 3339 (2026-11-26T02:14:00Z): the newest version committed at or before it. HEAD is the newest version.';
