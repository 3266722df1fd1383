/** Writes a kubeconfig for clients of orchd (`orchd kubeconfig`, startOrchd); kubeconfig.ts reads the ones orchd dials out with. */
import { stringify } from 'yaml';

/** What a client needs to reach one orchd: its URL and, for HTTPS or authentication, how to trust and be known. */
export interface KubeconfigOptions {
  server: string;
  /** PEM of the certificate authority that signed the serving certificate (HTTPS). */
  certificateAuthority?: string | Buffer;
  /** A bearer token the server's authentication accepts. */
  token?: string;
  /** The cluster, user and context name; default orchd. */
  name?: string;
}

/** A kubeconfig file (YAML) for kubectl, client-go, python-kubernetes and client-node (KubeConfig.loadFromString). */
export function kubeconfigYaml(o: KubeconfigOptions): string {
  const name = o.name ?? 'orchd';
  const cluster: Record<string, unknown> = { server: o.server };
  if (o.certificateAuthority !== undefined) cluster['certificate-authority-data'] = Buffer.from(o.certificateAuthority).toString('base64');
  // Plain http has no certificate to verify; client-node 1.x refuses http without this (clients.md).
  if (o.server.startsWith('http:')) cluster['insecure-skip-tls-verify'] = true;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: o.token ? { token: o.token } : {} }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    preferences: {},
  });
}
