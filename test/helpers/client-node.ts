/** @kubernetes/client-node as the tests drive it: a configuration for a server, and its refusals. */
import { KubeConfig } from '@kubernetes/client-node';

/** A client-node configuration for the server at url, as an anonymous user. */
export function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // 1.4.0 refuses plain http unless the cluster says skipTLSVerify (clients.md 3).
    clusters: [{ name: 'orchd', server: url, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'orchd', cluster: 'orchd', user: 'anonymous' }],
    currentContext: 'orchd',
  });
  return kc;
}

/** client-node's error for a non-2xx answer: `code` is the HTTP status, `status` the Status it carried. */
export async function failure(p: Promise<unknown>): Promise<{ code: number; status: any }> {
  try {
    await p;
  } catch (e: any) {
    return { code: e.code, status: typeof e.body === 'string' ? JSON.parse(e.body) : e.body };
  }
  throw new Error('expected the call to fail');
}
