import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * client-node, loaded on the first kubeConfig(): synchronously (Node ≥ 20.19 requires ES modules), so
 * kubeConfig() needs no await and a start does not pay for loading it (half a second) when the
 * tests never ask for it. A controller under test has it loaded already; require then finds it.
 * When it cannot be loaded, the error says which version is installed and which orchd needs:
 * client-node 2.x needs Node ≥ 22.19 and crashes on import under Node 20.
 */
export function loadClientNode(from: string = import.meta.url): typeof import('@kubernetes/client-node') {
  const req = createRequire(from);
  try {
    return req('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const installed = installedVersion(req);
    const found = installed === undefined ? 'it is not installed' : `${installed} is installed`;
    throw new Error(
      `kubeConfig() needs @kubernetes/client-node ${CLIENT_NODE_RANGE} installed beside orchd (npm install @kubernetes/client-node@1); ${found}, under Node ${process.versions.node}` +
        `${installed !== undefined && !installed.startsWith('1.') ? ' (client-node 2.x needs Node ≥ 22.19)' : ''}: ${why}`,
    );
  }
}

/** The client-node versions orchd is tested with: the peer range package.json declares. */
const CLIENT_NODE_RANGE = '1.x';

/** The version of the client-node a require would find, read from its package.json (2.x's exports hide it from require). */
function installedVersion(req: NodeJS.Require): string | undefined {
  for (const dir of req.resolve.paths('@kubernetes/client-node') ?? []) {
    try {
      return (JSON.parse(readFileSync(join(dir, '@kubernetes', 'client-node', 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      // Not in this folder: the next one up.
    }
  }
  return undefined;
}
