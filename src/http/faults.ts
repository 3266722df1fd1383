/**
 * Faults at the http edge (src/faults decides, this does): a delay before the request is served, a
 * status answered instead of it, a committed write whose answer is dropped, a read answered at an
 * older retained version. Watch faults are in handlers/watch-faults.ts. Nothing here writes to the
 * log or takes a resourceVersion.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Faults, FaultHit } from '../faults/faults.js';
import type { FaultRequest } from '../faults/rules.js';
import type { AuthorizationAttributes } from '../api/authorization.js';
import { managerFromUserAgent } from '../registry/field-manager.js';
import type { LogReader } from '../registry/log-reader.js';
import type { ResourceRoute } from './router.js';
import { conflict, internalError, requestTimeout, serviceUnavailable, tooManyRequests, type ApiError } from './respond/status.js';

/**
 * What a resource request is, as fault rules match it: what authorization read, plus who sent it
 * and how. The namespace is the route's: a Namespace object (namespaces/shop) is in none.
 */
export function faultRequest(a: AuthorizationAttributes, req: IncomingMessage, url: URL, route?: ResourceRoute): FaultRequest {
  const userAgent = req.headers['user-agent'] ?? '';
  return {
    verb: a.verb,
    group: a.apiGroup ?? '',
    resource: a.resource ?? '',
    subresource: a.subresource ?? '',
    namespace: route ? (route.namespace ?? '') : (a.namespace ?? ''),
    name: a.name ?? '',
    user: a.user.username,
    userAgent,
    fieldManager: url.searchParams.get('fieldManager') ?? managerFromUserAgent(userAgent),
  };
}

/**
 * kube-apiserver's answers, word for word: the optimistic-lock conflict of an update
 * (registry/generic/registry/store.go OptimisticLockErrorMsg), the max-in-flight 429, a storage
 * error's 500, the 503 of an unavailable server and the 504 of a request that ran out of time.
 */
export function injectedStatus(code: number, route: ResourceRoute): ApiError {
  switch (code) {
    case 409:
      return conflict({ group: route.kind.group, resource: route.kind.plural, name: route.name ?? '' }, 'the object has been modified; please apply your changes to the latest version and try again');
    case 429:
      return tooManyRequests();
    case 503:
      return serviceUnavailable('the server is currently unable to handle the request');
    case 504:
      return requestTimeout();
    default:
      return internalError('etcdserver: request timed out');
  }
}

/**
 * Decides the request's fault and does what comes before the handler; the hit, for the handler's
 * part. Called only when rules are set (a server without any pays one null check), in arrival
 * order, so sequential requests meet the same faults every run.
 */
export async function faultsBefore(
  faults: Faults,
  a: AuthorizationAttributes,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: ResourceRoute,
  annotate: (k: string, v: string) => void,
): Promise<FaultHit | undefined> {
  const hit = faults.decide(faultRequest(a, req, url, route));
  if (!hit) return undefined;
  await injectBefore(hit, faults, route, annotate);
  if (hit.inject.commitThenDrop) dropSuccessfulAnswer(res, hit, faults, annotate);
  return hit;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * What happens before the handler runs: the delay, then the status. Returns whether the handler
 * should run. A hit whose fault acts later (watch, commitThenDrop, staleRead) records itself there;
 * a delay alone is recorded here.
 */
export async function injectBefore(hit: FaultHit, faults: Faults, route: ResourceRoute, annotate: (k: string, v: string) => void): Promise<void> {
  const { inject } = hit;
  if (hit.latencyMs !== undefined && inject.watch !== 'lag') await sleep(hit.latencyMs);
  const latency = hit.latencyMs !== undefined ? { latencyMs: hit.latencyMs } : undefined;
  if (inject.status !== undefined) {
    note(faults.record(hit, `status:${inject.status}`, latency), annotate);
    throw injectedStatus(inject.status, route);
  }
  if (inject.watch === undefined && !inject.commitThenDrop && !inject.staleRead) note(faults.record(hit, 'latency', latency), annotate);
}

export const FAULT_ANNOTATION = 'faults.orch.io/injected';
const note = (f: { rule: string; fault: string }, annotate: (k: string, v: string) => void) => annotate(FAULT_ANNOTATION, `${f.rule}: ${f.fault}`);

/**
 * commitThenDrop: the write runs and commits as always; its answer, if a success, never leaves:
 * the connection is destroyed instead, so the client sees an error for a write that happened.
 * A write that failed is answered as usual (nothing was committed, so nothing is ambiguous).
 */
export function dropSuccessfulAnswer(res: ServerResponse, hit: FaultHit, faults: Faults, annotate: (k: string, v: string) => void): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (res.statusCode >= 300) return end(...args);
    note(faults.record(hit, 'commitThenDrop', undefined, writtenObject(args[0])), annotate);
    res.socket?.destroy();
    return res;
  }) as ServerResponse['end'];
}

/** The name and namespace of the object an answer carries (a create names it only there). */
function writtenObject(body: unknown): { namespace?: string; name?: string } | undefined {
  if (!Buffer.isBuffer(body) && typeof body !== 'string') return undefined;
  try {
    const meta = (JSON.parse(body.toString()) as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
    return {
      ...(typeof meta?.namespace === 'string' ? { namespace: meta.namespace } : {}),
      ...(typeof meta?.name === 'string' ? { name: meta.name } : {}),
    };
  } catch {
    // YAML or a Status: the request's own names stand.
    return undefined;
  }
}

/**
 * staleRead: the version a read without resourceVersion (or with "0": any) is answered at instead,
 * up to maxVersionsBehind behind the newest, never before the oldest kept; undefined when the read
 * names its own version or continues a list (its answer is pinned already).
 */
export function staleVersion(hit: FaultHit, log: Pick<LogReader, 'oldestVersion' | 'appliedSeq'>, params: URLSearchParams): number | undefined {
  const rv = params.get('resourceVersion');
  if ((rv !== null && rv !== '' && rv !== '0') || params.get('continue') || params.get('resourceVersionMatch')) return undefined;
  const head = log.appliedSeq;
  return Math.max(log.oldestVersion, head - (hit.staleBehind ?? 1), 0);
}
