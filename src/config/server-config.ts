/**
 * All configuration files of one server start, loaded together: each flag's file is read, converted
 * and validated, and the serving certificate pair is checked, so that start-up can report every
 * problem of every file at once and refuse to run on a partial configuration.
 *
 * The internal forms are kept with their file and version; the runtime parts of issue 8 (TLS,
 * authentication, authorization, encryption at rest, egress, tracing, admission plugins) build on
 * them, and the files that Kubernetes reloads can be re-read through the same loaders.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { admissionDocument, type AdmissionConfiguration } from './admission.js';
import { auditPolicyDocument, type AuditPolicy } from './audit-policy.js';
import { authenticationDocument, type AuthenticationConfiguration } from './authentication.js';
import { authorizationDocument, type AuthorizationConfiguration } from './authorization.js';
import type { DocumentKind } from './document.js';
import { egressSelectorDocument, type EgressSelectorConfiguration } from './egress-selector.js';
import { encryptionDocument, type EncryptionConfiguration } from './encryption.js';
import { loadDocumentFile, type ConfigProblem, type LoadedDocument } from './load.js';
import { tracingDocument, type TracingConfiguration } from './tracing.js';

/** The file named by each flag (`--authentication-config` …); absent flags are absent. */
export interface ServerConfigFiles {
  authentication?: string;
  authorization?: string;
  encryption?: string;
  egressSelector?: string;
  tracing?: string;
  admission?: string;
  /** --audit-policy-file */
  auditPolicy?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
}

export interface ServingCertificate {
  certFile: string;
  keyFile: string;
  /** PEM as read, leaf first. */
  cert: Buffer;
  key: Buffer;
}

export interface ServerConfig {
  authentication?: LoadedDocument<AuthenticationConfiguration>;
  authorization?: LoadedDocument<AuthorizationConfiguration>;
  encryption?: LoadedDocument<EncryptionConfiguration>;
  egressSelector?: LoadedDocument<EgressSelectorConfiguration>;
  tracing?: LoadedDocument<TracingConfiguration>;
  admission?: LoadedDocument<AdmissionConfiguration>;
  auditPolicy?: LoadedDocument<AuditPolicy>;
  tls?: ServingCertificate;
}

export type ServerConfigResult = { ok: true; config: ServerConfig } | { ok: false; problems: ConfigProblem[] };

function readServingCertificate(certFile: string, keyFile: string, problems: ConfigProblem[]): ServingCertificate | undefined {
  const read = (file: string): Buffer | undefined => {
    try {
      return readFileSync(file);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      problems.push({ file, message: `unable to read the file: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}` });
      return undefined;
    }
  };
  const cert = read(certFile);
  const key = read(keyFile);
  if (!cert || !key) return undefined;
  let x509: X509Certificate | undefined;
  let privateKey: KeyObject | undefined;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    problems.push({ file: certFile, message: `not a PEM certificate: ${(e as Error).message}` });
  }
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    problems.push({ file: keyFile, message: `not a PEM private key: ${(e as Error).message}` });
  }
  if (!x509 || !privateKey) return undefined;
  if (!x509.checkPrivateKey(privateKey)) {
    problems.push({ file: keyFile, message: `private key does not match public key in ${certFile}` });
    return undefined;
  }
  return { certFile, keyFile, cert, key };
}

/** Loads every given file; ok only when none of them has a problem. */
export function loadServerConfig(files: ServerConfigFiles): ServerConfigResult {
  const problems: ConfigProblem[] = [];
  const config: ServerConfig = {};
  const load = <T>(file: string | undefined, kind: DocumentKind<T>): LoadedDocument<T> | undefined => {
    if (file === undefined) return undefined;
    const result = loadDocumentFile(file, kind);
    if (result.ok) return result.document;
    problems.push(...result.problems);
    return undefined;
  };
  const put = <K extends keyof ServerConfig>(key: K, value: ServerConfig[K] | undefined) => {
    if (value) config[key] = value;
  };
  put('authentication', load(files.authentication, authenticationDocument));
  put('authorization', load(files.authorization, authorizationDocument));
  put('encryption', load(files.encryption, encryptionDocument));
  put('egressSelector', load(files.egressSelector, egressSelectorDocument));
  put('tracing', load(files.tracing, tracingDocument));
  put('admission', load(files.admission, admissionDocument));
  put('auditPolicy', load(files.auditPolicy, auditPolicyDocument));

  const { tlsCertFile: certFile, tlsPrivateKeyFile: keyFile } = files;
  if (certFile !== undefined && keyFile !== undefined) put('tls', readServingCertificate(certFile, keyFile, problems));
  else if (certFile !== undefined) problems.push({ file: certFile, message: '--tls-private-key-file is required with --tls-cert-file' });
  else if (keyFile !== undefined) problems.push({ file: keyFile, message: '--tls-cert-file is required with --tls-private-key-file' });

  return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}
