/**
 * A client connection file (kubeconfig, `apiVersion: v1`, `kind: Config`) read for what the server
 * needs when it calls out: each cluster's server and CA, each user's bearer token, client
 * certificate or basic auth, by name, and the current context.
 * Admission webhooks take their credentials from it (webhook-admission.ts), authorizer webhooks
 * their whole connection (src/auth/kubeconfig.ts). Relative file names are resolved from
 * the kubeconfig's folder (clientcmd's ResolveLocalPaths). Every credential file is read now, so a
 * missing certificate stops the start instead of failing requests later.
 *
 * Stricter than clientcmd's loader, which ignores what a caller never uses: a user with two ways
 * to authenticate, a certificate without its key (clientcmd's own validation rules), and what
 * orchd cannot do (exec plugins, auth-provider, impersonation) are errors here.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { FieldPath, formatFieldError, forbidden, invalid, notSupported, required, duplicate, type FieldError } from '../api/field-errors.js';
import { isObject, type JsonObject } from '../api/json-access.js';
import { arrayOf, bool, obj, str, type Schema } from '../api/schema.js';
import { findTypeErrors } from '../api/unknown-fields.js';
import { Seen, objectOf, objectsOf, optString, stringOf } from './checks.js';
import { parseDocumentText } from './load.js';

export interface ClientCredentials {
  /** Sent as `Authorization: Bearer …` (token, or the content of tokenFile). */
  token?: string;
  /** PEM client certificate and its key, presented in the TLS handshake. */
  cert?: Buffer;
  key?: Buffer;
  /** Basic authentication. */
  username?: string;
  password?: string;
}

export interface ClusterInfo {
  server: string;
  ca?: Buffer;
  servername?: string;
  insecureSkipTLSVerify: boolean;
}

export interface KubeConfig {
  file: string;
  /** Credentials by user name (the kubeconfig's `users[].name`). */
  users: ReadonlyMap<string, ClientCredentials>;
  /** Clusters by name (the kubeconfig's `clusters[].name`). */
  clusters: ReadonlyMap<string, ClusterInfo>;
  /** The user named by current-context's context, when there is one. */
  currentUser?: string;
  /** current-context, and the context it names when the file has it. */
  currentContext?: { name: string; context?: { cluster: string; user: string } };
  /** Every context by name (a client may be told which to use: kubectl's --context). */
  contexts: ReadonlyMap<string, { cluster: string; user: string }>;
}

const userSchema: Schema = obj(undefined, {
  token: str(),
  tokenFile: str(),
  'client-certificate': str(),
  'client-certificate-data': str(undefined, { format: 'byte' }),
  'client-key': str(),
  'client-key-data': str(undefined, { format: 'byte' }),
  username: str(),
  password: str(),
  as: str(),
  'as-uid': str(),
  'as-groups': arrayOf(str()),
  'as-user-extra': { type: 'object', additionalProperties: arrayOf(str()) },
  exec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  'auth-provider': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
});

// Only what is read is typed: clientcmd ignores fields it does not know, and so do we.
const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  'current-context': str(),
  users: arrayOf(obj(undefined, { name: str(), user: userSchema })),
  clusters: arrayOf(
    obj(undefined, {
      name: str(),
      cluster: obj(undefined, {
        server: str(),
        'certificate-authority': str(),
        'certificate-authority-data': str(undefined, { format: 'byte' }),
        'tls-server-name': str(),
        'insecure-skip-tls-verify': bool(),
      }),
    }),
  ),
  contexts: arrayOf(obj(undefined, { name: str(), context: obj(undefined, { user: str(), cluster: str(), namespace: str() }) })),
});

/** File content, or the reason it cannot be read as an error at path. */
function readCredentialFile(file: string, p: FieldPath, errs: FieldError[]): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (e) {
    errs.push(invalid(p, file, `unable to read the file: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`));
    return undefined;
  }
}

/** One of a pair of fields (a file name, or inline base64 data), read; clientcmd lets data win over the file. */
function fileOrData(user: JsonObject, fileKey: string, p: FieldPath, base: string, errs: FieldError[]): Buffer | undefined {
  const data = optString(user, `${fileKey}-data`);
  const file = optString(user, fileKey);
  if (data) return Buffer.from(data, 'base64');
  return file ? readCredentialFile(resolve(base, file), p.child(fileKey), errs) : undefined;
}

function readUser(name: string, user: JsonObject, p: FieldPath, base: string, errs: FieldError[]): ClientCredentials {
  const creds: ClientCredentials = {};
  const methods: string[] = [];
  const token = optString(user, 'token');
  const tokenFile = optString(user, 'tokenFile');
  if (token) creds.token = token;
  else if (tokenFile) {
    const text = readCredentialFile(resolve(base, tokenFile), p.child('tokenFile'), errs);
    if (text !== undefined) creds.token = text.toString('utf8').trim();
  }
  if (token || tokenFile) methods.push('token');
  const username = stringOf(user, 'username');
  const password = stringOf(user, 'password');
  if (username || password) {
    methods.push('basicAuth');
    creds.username = username;
    creds.password = password;
  }
  const hasCert = Boolean(optString(user, 'client-certificate') || optString(user, 'client-certificate-data'));
  const hasKey = Boolean(optString(user, 'client-key') || optString(user, 'client-key-data'));
  if (optString(user, 'client-certificate') && optString(user, 'client-certificate-data')) {
    errs.push(invalid(p.child('client-certificate-data'), '<omitted>', `client-cert-data and client-cert are both specified for ${name}`));
  }
  if (optString(user, 'client-key') && optString(user, 'client-key-data')) {
    errs.push(invalid(p.child('client-key-data'), '<omitted>', `client-key-data and client-key are both specified for ${name}`));
  }
  if (hasCert && !hasKey) errs.push(required(p.child('client-key'), `client-key-data or client-key must be specified for ${name} to use the clientCert authentication method`));
  if (hasKey && !hasCert) errs.push(required(p.child('client-certificate'), `client-certificate-data or client-certificate must be specified for ${name} to use the client key`));
  if (hasCert && hasKey) {
    const before = errs.length;
    const cert = fileOrData(user, 'client-certificate', p, base, errs);
    const key = fileOrData(user, 'client-key', p, base, errs);
    if (cert && key && errs.length === before) {
      const problem = certificatePairProblem(cert, key);
      if (problem) errs.push(invalid(p.child('client-certificate'), '<omitted>', problem));
      else Object.assign(creds, { cert, key });
    }
  }
  if (isObject(user.exec)) errs.push(forbidden(p.child('exec'), 'exec credential plugins are not supported by orchd'));
  if (isObject(user['auth-provider'])) errs.push(forbidden(p.child('auth-provider'), 'auth provider not supported'));
  for (const key of ['as', 'as-uid', 'as-groups', 'as-user-extra']) {
    if (user[key] !== undefined && user[key] !== null) errs.push(forbidden(p.child(key), 'impersonation is not supported by orchd'));
  }
  if (methods.length > 1) errs.push(invalid(p, name, `more than one authentication method found for ${name}; found [${methods.join(' ')}], only one is allowed`));
  return creds;
}

function certificatePairProblem(cert: Buffer, key: Buffer): string | undefined {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    return `not a PEM certificate: ${(e as Error).message}`;
  }
  try {
    return x509.checkPrivateKey(createPrivateKey(key)) ? undefined : 'the client key does not match the client certificate';
  } catch (e) {
    return `not a PEM private key: ${(e as Error).message}`;
  }
}

/**
 * Reads and checks a kubeconfig. Errors come as messages with the kubeconfig's own field paths
 * (`users[0].user.client-key: Required value: …`), or why the file cannot be read at all.
 */
export function readKubeConfig(file: string): { value: KubeConfig; errors: string[] } {
  const value: KubeConfig = { file, users: new Map(), clusters: new Map(), contexts: new Map() };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return { value, errors: [`unable to read the file: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`] };
  }
  const parsed = parseDocumentText(text);
  if (parsed.errors.length > 0) return { value, errors: parsed.errors };
  if (!isObject(parsed.value)) return { value, errors: ['the file must hold a kubeconfig object (kind: Config)'] };
  const doc = parsed.value;
  const typeErrors = findTypeErrors(doc, schema);
  if (typeErrors.length > 0) return { value, errors: typeErrors.map(formatFieldError) };

  const root = FieldPath.root('');
  const errs: FieldError[] = [];
  const apiVersion = optString(doc, 'apiVersion');
  if (apiVersion && apiVersion !== 'v1') errs.push(notSupported(root.child('apiVersion'), apiVersion, ['v1']));
  const kind = optString(doc, 'kind');
  if (kind && kind !== 'Config') errs.push(notSupported(root.child('kind'), kind, ['Config']));
  const base = dirname(file);
  const users = new Map<string, ClientCredentials>();
  const seen = new Seen();
  objectsOf(doc, 'users').forEach((u, i) => {
    const p = root.child('users').index(i);
    const name = stringOf(u, 'name');
    if (!name) errs.push(required(p.child('name')));
    else if (seen.repeat(name)) errs.push(duplicate(p.child('name'), name));
    users.set(name, readUser(name, objectOf(u, 'user') ?? {}, p.child('user'), base, errs));
  });
  const clusters = new Map<string, ClusterInfo>();
  objectsOf(doc, 'clusters').forEach((c, i) => {
    const cluster = objectOf(c, 'cluster') ?? {};
    const ca = fileOrData(cluster, 'certificate-authority', root.child('clusters').index(i).child('cluster'), base, errs);
    const servername = optString(cluster, 'tls-server-name');
    clusters.set(stringOf(c, 'name'), {
      server: stringOf(cluster, 'server'),
      ...(ca ? { ca } : {}),
      ...(servername ? { servername } : {}),
      insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    });
  });
  const contexts = new Map(
    objectsOf(doc, 'contexts').map((c) => {
      const named = objectOf(c, 'context');
      return [stringOf(c, 'name'), { cluster: stringOf(named, 'cluster'), user: stringOf(named, 'user') }] as const;
    }),
  );
  const current = stringOf(doc, 'current-context');
  const context = contexts.get(current);
  const currentContext = current ? { name: current, ...(context ? { context } : {}) } : undefined;
  const currentUser = currentContext?.context?.user;
  return {
    value: { file, users, clusters, contexts, ...(currentUser && users.has(currentUser) ? { currentUser } : {}), ...(currentContext ? { currentContext } : {}) },
    errors: errs.map(formatFieldError),
  };
}
