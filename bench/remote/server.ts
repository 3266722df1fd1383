/**
 * Any API server, as a kubeconfig names it (`--kubeconfig FILE [--context C]`): where it is, how to
 * trust it and how to prove who we are (a CA, a client certificate, a bearer token), then who it is
 * (/version) and what it serves to write to (discovery): orchd's events.orch.io Events,
 * Kubernetes' events.k8s.io Events, or else core ConfigMaps.
 */
import { readKubeConfig } from '../../src/config/kubeconfig.js';
import { HttpClient, type ClientOptions } from '../http-client.js';

/** Something the operator must fix (a file, a context, credentials): one line, no stack. */
export class BenchUsageError extends Error {}

/** The kind a server's scenarios write, as discovery found it. */
export interface BenchKind {
  /** group/version as written in apiVersion (core: v1). */
  apiVersion: string;
  kind: 'Event' | 'ConfigMap';
  plural: string;
  /** Where the scenarios' namespace keeps them. */
  collection: string;
}

export interface RemoteServer {
  /** The context's name and the file, as the report names the server. */
  label: string;
  context: string;
  url: string;
  client: ClientOptions;
  /** /version's gitVersion (and platform), or what the server said instead. */
  version: string;
  kind: BenchKind;
}

const NAMESPACE = 'default';

/** The connection a kubeconfig's context describes (the current one unless given). */
export function connectionOf(file: string, context?: string): Omit<RemoteServer, 'version' | 'kind'> {
  const { value: kc, errors } = readKubeConfig(file);
  if (errors.length > 0) throw new BenchUsageError(`--kubeconfig ${file}: ${errors.join('; ')}`);
  const name = context ?? kc.currentContext?.name;
  if (!name) throw new BenchUsageError(`--kubeconfig ${file}: no current-context; name one with --context`);
  const ctx = kc.contexts.get(name);
  if (!ctx) throw new BenchUsageError(`--kubeconfig ${file}: context "${name}" not found (contexts: ${[...kc.contexts.keys()].join(', ') || 'none'})`);
  const cluster = kc.clusters.get(ctx.cluster);
  if (!cluster?.server) throw new BenchUsageError(`--kubeconfig ${file}: context "${name}": cluster "${ctx.cluster}" has no server`);
  const user = kc.users.get(ctx.user);
  const client: ClientOptions = {
    ...(cluster.ca ? { ca: cluster.ca } : {}),
    ...(cluster.servername ? { servername: cluster.servername } : {}),
    ...(cluster.insecureSkipTLSVerify ? { insecure: true } : {}),
    ...(user?.cert && user.key ? { cert: user.cert, key: user.key } : {}),
    ...(user?.token ? { headers: { authorization: `Bearer ${user.token}` } } : {}),
  };
  return { label: `${name} (${file})`, context: name, url: cluster.server.replace(/\/$/, ''), client };
}

/** Asks the server who it is and what it serves; a refusal or an unreachable server is one line naming the context. */
export async function discover(c: Omit<RemoteServer, 'version' | 'kind'>): Promise<RemoteServer> {
  const http = new HttpClient(c.url, 1, c.client);
  const get = async (path: string): Promise<any> => {
    const res = await http.request('GET', path).catch((err: Error) => {
      throw new BenchUsageError(`context "${c.context}": ${c.url} cannot be reached: ${err.message}`);
    });
    if (res.status === 401 || res.status === 403) {
      throw new BenchUsageError(`context "${c.context}": ${c.url} refused the credentials (${res.status} on GET ${path}): ${statusMessage(res.body)}`);
    }
    if (res.status !== 200) throw new BenchUsageError(`context "${c.context}": GET ${c.url}${path} answered ${res.status}: ${statusMessage(res.body)}`);
    return JSON.parse(res.body.toString('utf8'));
  };
  try {
    const v = await get('/version');
    const version = `${v.gitVersion ?? 'unknown'}${v.platform ? ` ${v.platform}` : ''}`;
    return { ...c, version, kind: await servedKind(get) };
  } finally {
    http.close();
  }
}

const statusMessage = (body: Buffer): string => {
  const text = body.toString('utf8');
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200).trim() || '(no body)';
  }
};

/** events.orch.io Events, else events.k8s.io Events, else core ConfigMaps: the first one served. */
async function servedKind(get: (path: string) => Promise<any>): Promise<BenchKind> {
  const groups: { name: string; preferredVersion?: { version: string } }[] = (await get('/apis')).groups ?? [];
  for (const group of ['events.orch.io', 'events.k8s.io']) {
    const g = groups.find((x) => x.name === group);
    const version = g?.preferredVersion?.version;
    if (!version) continue;
    const resources: { name: string }[] = (await get(`/apis/${group}/${version}`)).resources ?? [];
    if (resources.some((r) => r.name === 'events'))
      return { apiVersion: `${group}/${version}`, kind: 'Event', plural: 'events', collection: `/apis/${group}/${version}/namespaces/${NAMESPACE}/events` };
  }
  const core: { name: string }[] = (await get('/api/v1')).resources ?? [];
  if (core.some((r) => r.name === 'configmaps')) return { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', collection: `/api/v1/namespaces/${NAMESPACE}/configmaps` };
  throw new BenchUsageError('the server serves neither events.orch.io nor events.k8s.io Events nor core ConfigMaps');
}
