/**
 * The client connection a webhook authorizer's `connectionInfo.clusterConfigFile` names (the
 * kubeconfig format, read by src/config/kubeconfig.ts): the cluster of the current context (or the
 * only one) says where the webhook is and which CA to trust; its user says how orchd proves itself
 * (a client certificate and key, or a bearer token).
 */
import { readKubeConfig } from '../config/kubeconfig.js';

export interface ClientConnection {
  server: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  servername?: string;
  insecureSkipTLSVerify: boolean;
}

/** The entry named `name`, or the only one when no name is given (a file may have no user). */
function pick<T>(entries: ReadonlyMap<string, T>, name: string | undefined, what: string, file: string): T | undefined {
  if (name) {
    const found = entries.get(name);
    if (!found) throw new Error(`${file}: ${what} "${name}" not found`);
    return found;
  }
  if (entries.size === 1) return entries.values().next().value;
  if (entries.size === 0 && what === 'user') return undefined;
  throw new Error(`${file}: no current-context, and ${entries.size} ${what}s to choose from`);
}

/** Throws with the file and the problem when the file cannot be read or names no usable server. */
export function readClientConnection(file: string): ClientConnection {
  const { value: kc, errors } = readKubeConfig(file);
  if (errors.length > 0) throw new Error(errors.map((e) => `${file}: ${e}`).join('\n'));
  const current = kc.currentContext;
  if (current && !current.context) throw new Error(`${file}: context "${current.name}" not found`);
  const cluster = pick(kc.clusters, current?.context?.cluster, 'cluster', file);
  const user = pick(kc.users, current?.context?.user, 'user', file);
  if (!cluster?.server) throw new Error(`${file}: the cluster has no server`);
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(`${file}: the cluster server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`${file}: the cluster server ${cluster.server} must use https`);
  return {
    server: url,
    ...(cluster.ca ? { ca: cluster.ca } : {}),
    ...(user?.cert && user.key ? { cert: user.cert, key: user.key } : {}),
    ...(user?.token ? { token: user.token } : {}),
    ...(cluster.servername ? { servername: cluster.servername } : {}),
    insecureSkipTLSVerify: cluster.insecureSkipTLSVerify,
  };
}
