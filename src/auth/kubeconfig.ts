/**
 * The client connection file a webhook authorizer's `connectionInfo.clusterConfigFile` names (the
 * kubeconfig format): the cluster of the current context (or the only one) says where the webhook
 * is and which CA to trust; its user says how orchd proves itself (a client certificate and key,
 * or a bearer token). Paths inside the file are relative to the file, as client-go resolves them.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

export interface ClientConnection {
  server: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  servername?: string;
  insecureSkipTLSVerify: boolean;
}

type Named = { name?: unknown; [k: string]: unknown };
const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The entry named `name`, or the only entry when no name is given. */
function pick(list: unknown, name: string | undefined, what: string, file: string): Record<string, unknown> | undefined {
  const entries = (Array.isArray(list) ? list : []) as Named[];
  if (name !== undefined) {
    const found = entries.find((e) => record(e).name === name);
    if (!found) throw new Error(`${file}: ${what} "${name}" not found`);
    return record(found);
  }
  if (entries.length === 1) return record(entries[0]);
  if (entries.length === 0 && what === 'user') return undefined;
  throw new Error(`${file}: no current-context, and ${entries.length} ${what}s to choose from`);
}

/** Throws with the file and the problem when the file cannot be read or names no usable server. */
export function readClientConnection(file: string): ClientConnection {
  let doc: Record<string, unknown>;
  try {
    doc = record(parse(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new Error(`${file}: unable to read the client connection file: ${(err as Error).message}`);
  }
  const contextName = text(doc['current-context']);
  const context = contextName !== undefined ? record(pick(doc.contexts, contextName, 'context', file)?.context) : {};
  const cluster = record(pick(doc.clusters, text(context.cluster), 'cluster', file)?.cluster);
  const user = record(pick(doc.users, text(context.user), 'user', file)?.user);

  const server = text(cluster.server);
  if (!server) throw new Error(`${file}: the cluster has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`${file}: the cluster server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`${file}: the cluster server ${server} must use https`);

  const base = dirname(resolve(file));
  const load = (data: unknown, path: unknown, field: string): Buffer | undefined => {
    if (text(data)) return Buffer.from(data as string, 'base64');
    if (!text(path)) return undefined;
    try {
      return readFileSync(resolve(base, path as string));
    } catch (err) {
      throw new Error(`${file}: ${field}: ${(err as Error).message}`);
    }
  };
  const ca = load(cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate-authority');
  const cert = load(user['client-certificate-data'], user['client-certificate'], 'client-certificate');
  const key = load(user['client-key-data'], user['client-key'], 'client-key');
  if ((cert === undefined) !== (key === undefined)) throw new Error(`${file}: client-certificate and client-key must be given together`);
  const tokenFile = load(undefined, user.tokenFile, 'tokenFile');
  const token = text(user.token) ?? tokenFile?.toString('utf8').trim();
  return {
    server: url,
    ...(ca ? { ca } : {}),
    ...(cert && key ? { cert, key } : {}),
    ...(token ? { token } : {}),
    ...(text(cluster['tls-server-name']) ? { servername: cluster['tls-server-name'] as string } : {}),
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}
