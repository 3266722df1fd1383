/**
 * kube-apiserver's max-in-flight filter (`--max-requests-inflight`, `--max-mutating-requests-inflight`):
 * at most so many read-only and so many mutating requests are served at once; past that a request
 * is refused at once with 429 and `Retry-After: 1`, never queued, so a flood cannot pile up work or
 * memory behind the ones being served. As there:
 *   - get, list and watch are read-only; every other verb (and a non-resource POST…) is mutating;
 *   - long-running requests (the watch and proxy verbs; attach, exec, proxy, log, portforward
 *     subresources) are not counted: a watch holds its slot for up to an hour;
 *   - a member of system:masters is always served (a super-admin must be able to repair the server);
 *   - a limit of 0 is no limit.
 * It runs after authentication and before authorization, where Kubernetes' handler chain has it.
 */
import type { AuthorizationAttributes } from '../api/authorization.js';
import type { UserInfo } from '../auth/user.js';
import { tooManyRequests } from './respond/status.js';
import type { Sample } from '../observability/samples.js';

export interface InflightLimits {
  /** `--max-requests-inflight`: read-only requests at once; 0 is no limit. Kubernetes' default 400. */
  maxRequestsInflight: number;
  /** `--max-mutating-requests-inflight`: mutating requests at once; 0 is no limit. Kubernetes' default 200. */
  maxMutatingRequestsInflight: number;
}

export const DEFAULT_INFLIGHT_LIMITS: InflightLimits = { maxRequestsInflight: 400, maxMutatingRequestsInflight: 200 };

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
const PRIVILEGED_GROUP = 'system:masters';

/** kube-apiserver's long-running check: such requests are neither counted nor timed out. */
const isLongRunning = (a: Pick<AuthorizationAttributes, 'verb' | 'isResourceRequest' | 'subresource'>): boolean =>
  LONG_RUNNING_VERBS.has(a.verb) || (a.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(a.subresource ?? ''));

export class InflightLimiter {
  private readOnly = 0;
  private mutating = 0;

  constructor(private readonly limits: InflightLimits) {}

  /**
   * Counts the request in, or throws Kubernetes' 429 when its kind is at its limit. The returned
   * function counts it out (call it once, when the request is answered).
   */
  admit(attributes: Pick<AuthorizationAttributes, 'verb' | 'isResourceRequest' | 'subresource'>, user: UserInfo): () => void {
    if (isLongRunning(attributes)) return noop;
    const readOnly = READ_ONLY_VERBS.has(attributes.verb);
    const limit = readOnly ? this.limits.maxRequestsInflight : this.limits.maxMutatingRequestsInflight;
    if (limit === 0) return noop;
    if ((readOnly ? this.readOnly : this.mutating) >= limit) {
      if (user.groups.includes(PRIVILEGED_GROUP)) return noop;
      throw tooManyRequests();
    }
    if (readOnly) this.readOnly++;
    else this.mutating++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (readOnly) this.readOnly--;
      else this.mutating--;
    };
  }

  /** Requests counted now, for /metrics (kube-apiserver's apiserver_current_inflight_requests). */
  samples(): Sample[] {
    const help = 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.';
    return [
      { name: 'apiserver_current_inflight_requests', help, type: 'gauge', labels: { request_kind: 'readOnly' }, value: this.readOnly },
      { name: 'apiserver_current_inflight_requests', help, type: 'gauge', labels: { request_kind: 'mutating' }, value: this.mutating },
    ];
  }
}

const noop = (): void => undefined;
