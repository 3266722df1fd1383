import type { KindStrategy } from '../api/strategy.js';
import type { Registry } from '../registry/registry.js';
import type { Logger } from '../observability/logger.js';
import { startClusterRoleAggregation } from './cluster-role-aggregation.js';
import { startCustomResources } from './custom-resources.js';
import type { ServedKinds } from '../api/served-kinds.js';
import { startEventExpiry } from './event-expiry.js';
import { startGarbageCollector } from './garbage-collector.js';
import { startNamespaceCleanup } from './namespace-cleanup.js';
import { startPolicyStatus, type PolicyTypeCheck } from './policy-status.js';
import { ensureBootstrapPolicy } from './rbac-bootstrap.js';

/** The namespaces Kubernetes creates at startup. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface ControllerOptions {
  logger: Logger;
  /** Events older than this are deleted; 0: never. */
  eventTtlSeconds: number;
  /**
   * Run the ValidatingAdmissionPolicy status controller (default true). Like a controller left out
   * of kube-controller-manager's --controllers, off means policies get no status.typeChecking.
   */
  policyStatus?: boolean;
  /** What the policy status controller writes: src/admission's type checker. */
  typeCheckPolicy: PolicyTypeCheck;
  /** The server's kinds, which CustomResourceDefinitions add to: without it, CRDs are stored but not served. */
  servedKinds?: ServedKinds;
}

/**
 * The server's own writes, once the store is rebuilt and before it says ready: the system
 * namespaces and the bootstrap RBAC policy, then the controllers, clients of the registry like any
 * other. Started by serve.ts (the composition root); a server that only serves a recorded log
 * (src/timetravel/replay/server.ts) does not call this. Returns each controller's stop, in the order started.
 */
export async function startControllers(objects: Registry, kinds: readonly KindStrategy[], opts: ControllerOptions): Promise<(() => void)[]> {
  const { logger } = opts;
  const nsKind = kinds.find((k) => k.group === '' && k.plural === 'namespaces');
  for (const name of nsKind ? SYSTEM_NAMESPACES : []) {
    if (objects.current(nsKind!, undefined, name)) continue;
    await objects.create(nsKind!, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false }).catch((err: unknown) => {
      logger.warn('could not create system namespace', { name, error: String(err) });
    });
  }
  await ensureBootstrapPolicy(objects, kinds, logger);
  const stops = [startGarbageCollector(objects, kinds, logger), startNamespaceCleanup(objects, kinds, logger)];
  if (opts.policyStatus !== false) stops.push(startPolicyStatus(objects, kinds, opts.typeCheckPolicy, logger));
  stops.push(startClusterRoleAggregation(objects, kinds, logger));
  if (opts.servedKinds) stops.push(startCustomResources(objects, opts.servedKinds, logger));
  // Both Events, the core one and events.orch.io's, expire (kube-apiserver's --event-ttl covers both).
  const eventKinds = kinds.filter((k) => k.kind === 'Event' && (k.group === '' || k.group === 'events.orch.io'));
  if (opts.eventTtlSeconds > 0) for (const k of eventKinds) stops.push(startEventExpiry(objects, k, opts.eventTtlSeconds, logger));
  return stops;
}
