/**
 * A `Webhook` authorizer: asks a remote service with a SubjectAccessReview, as Kubernetes' webhook
 * authorizer does. In order, for each request:
 *   1. matchConditions over the v1 spec: a false skips the webhook (no opinion); an error is the
 *      failure policy's decision;
 *   2. the answer cache, keyed by the request's attributes: allowed answers live authorizedTTL,
 *      the others unauthorizedTTL (a TTL of 0, or cache…Requests false in v1, caches nothing);
 *   3. a POST of the review to the server of the client connection file, each attempt bounded by
 *      `timeout`; an answer that says "try again" (500, 504, 429, a Retry-After header, a reset
 *      connection) is retried with Kubernetes' backoff (500 ms ×1.5, 20 % jitter, 5 attempts);
 *      a failed call or a malformed answer is the failure policy's decision (NoOpinion lets the
 *      chain go on, Deny stops it), carrying the error.
 * Steps 1 and 2 answer synchronously, so a cached answer costs no promise, and the CEL
 * `authorizer` library can use it from inside an expression. Concurrent misses of one key share
 * one call.
 */
import { request, type Agent } from 'node:https';
import type { AuthorizerConfiguration, WebhookConfiguration } from '../config/authorization.js';
import type { Egress } from '../egress/egress.js';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../api/authorization.js';
import { readClientConnection, type ClientConnection } from './kubeconfig.js';
import { compileMatchConditions, type MatchConditions } from './match-conditions.js';
import { decisionOf, matchConditionRequest, reviewStatus, subjectAccessReviewBody, subjectAccessReviewSpec, type ReviewStatus } from './subject-access-review.js';
import { outboundCall } from '../observability/spans.js';

/** Kubernetes' cache size for webhook answers. */
const CACHE_SIZE = 8192;
/** Requests whose requester-chosen attributes are longer than this are not cached (a DoS guard, as Kubernetes'). */
const MAX_CACHED_ATTRIBUTE_BYTES = 10_000;
/** Answers larger than this are refused rather than buffered. */
const MAX_ANSWER_BYTES = 1 << 20;
/** Kubernetes' DefaultAuthWebhookRetryBackoff. */
const RETRY = { initialMs: 500, factor: 1.5, jitter: 0.2, attempts: 5 };

export interface WebhookDeps {
  egress: Egress;
  now?: () => number;
  /** The first retry's delay (tests shorten it); 500 ms. */
  retryInitialMs?: number;
}

/** A call that failed in a way worth repeating (Kubernetes' DefaultShouldRetry). */
class RetriableError extends Error {}

export interface WebhookCounters {
  cacheHits: number;
  cacheMisses: number;
  /** Calls by outcome: success, error, timeout. */
  calls: Record<'success' | 'error' | 'timeout', number>;
  /** Requests the match conditions excluded. */
  skipped: number;
}

export class WebhookAuthorizer implements Authorizer {
  readonly counters: WebhookCounters = { cacheHits: 0, cacheMisses: 0, calls: { success: 0, error: 0, timeout: 0 }, skipped: 0 };
  private readonly cache = new Map<string, { status: ReviewStatus; until: number }>();
  private readonly inFlight = new Map<string, Promise<AuthorizationDecision>>();
  private readonly conditions: MatchConditions | undefined;
  private readonly connection: ClientConnection;
  private readonly agent: Agent;
  private readonly now: () => number;
  private readonly config: WebhookConfiguration;
  private readonly retryInitialMs: number;

  /** Throws (one problem a line) when the connection file or a match condition is unusable. */
  constructor(
    readonly name: string,
    a: AuthorizerConfiguration,
    path: string,
    deps: WebhookDeps,
  ) {
    if (!a.webhook) throw new Error(`${path}.webhook: Required value`);
    this.config = a.webhook;
    const info = this.config.connectionInfo;
    if (info.type !== 'KubeConfigFile') {
      throw new Error(`${path}.webhook.connectionInfo.type: InClusterConfig is not available: orchd does not run inside a cluster; use KubeConfigFile`);
    }
    this.conditions = compileMatchConditions(this.config.matchConditions, `${path}.webhook`);
    this.connection = readClientConnection(info.clusterConfigFile);
    const c = this.connection;
    this.agent = deps.egress.httpsAgent('controlplane', {
      ...(c.ca ? { ca: c.ca } : {}),
      ...(c.cert && c.key ? { cert: c.cert, key: c.key } : {}),
      ...(c.servername ? { servername: c.servername } : {}),
      rejectUnauthorized: !c.insecureSkipTLSVerify,
    });
    this.now = deps.now ?? Date.now;
    this.retryInitialMs = deps.retryInitialMs ?? RETRY.initialMs;
  }

  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (this.conditions) {
      const match = this.conditions.evaluate(matchConditionRequest(subjectAccessReviewSpec(attributes)));
      if ('error' in match) return this.onError(match.error);
      if (!match.matches) {
        this.counters.skipped++;
        return { decision: 'noOpinion' };
      }
    }
    const key = cacheKey(attributes);
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) {
      this.counters.cacheHits++;
      return decisionOf(hit.status);
    }
    if (hit) this.cache.delete(key);
    this.counters.cacheMisses++;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.review(subjectAccessReviewSpec(attributes), key, cacheable(attributes)).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Frees the connections once the calls still in flight (a chain replaced by a reload) had their timeout to end. */
  close(): void {
    setTimeout(() => this.agent.destroy(), this.config.timeoutMs).unref();
  }

  private onError(error: string): AuthorizationDecision {
    return { decision: this.config.failurePolicy === 'Deny' ? 'deny' : 'noOpinion', error };
  }

  private async review(spec: ReturnType<typeof subjectAccessReviewSpec>, key: string, cache: boolean): Promise<AuthorizationDecision> {
    const body = subjectAccessReviewBody(spec, this.config.subjectAccessReviewVersion);
    let status: ReviewStatus | undefined;
    for (let attempt = 1; !status; attempt++) {
      try {
        status = reviewStatus(await this.post(body));
        this.counters.calls.success++;
      } catch (err) {
        const timedOut = (err as Error).name === 'TimeoutError';
        this.counters.calls[timedOut ? 'timeout' : 'error']++;
        if (err instanceof RetriableError && attempt < RETRY.attempts) {
          const delay = this.retryInitialMs * RETRY.factor ** (attempt - 1) * (1 + RETRY.jitter * Math.random());
          await new Promise((resolve) => setTimeout(resolve, delay));
          continue;
        }
        return this.onError(`Post "${this.connection.server.href}": ${timedOut ? `timed out after ${this.config.timeoutMs}ms` : (err as Error).message}`);
      }
    }
    const ttl = status.allowed ? (this.config.cacheAuthorizedRequests ? this.config.authorizedTTLMs : 0) : this.config.cacheUnauthorizedRequests ? this.config.unauthorizedTTLMs : 0;
    if (cache && ttl > 0) this.remember(key, status, ttl);
    return decisionOf(status);
  }

  private remember(key: string, status: ReviewStatus, ttlMs: number): void {
    if (this.cache.size >= CACHE_SIZE) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, { status, until: this.now() + ttlMs });
  }

  /** One SubjectAccessReview call, traced as a client span of the request it authorizes. */
  private post(body: object): Promise<unknown> {
    return outboundCall('authorization.webhook', { 'server.address': new URL(this.connection.server).host }, (trace) => this.send(body, trace));
  }

  private send(body: object, trace: Record<string, string>): Promise<unknown> {
    const data = JSON.stringify(body);
    const c = this.connection;
    return new Promise((resolve, reject) => {
      const req = request(
        c.server,
        {
          method: 'POST',
          agent: this.agent,
          signal: AbortSignal.timeout(this.config.timeoutMs),
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'Content-Length': Buffer.byteLength(data),
            ...trace,
            ...(c.token ? { Authorization: `Bearer ${c.token}` } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const code = res.statusCode ?? 0;
            if (code < 200 || code > 299) {
              const again = code === 500 || code === 504 || code === 429 || res.headers['retry-after'] !== undefined;
              return reject(new (again ? RetriableError : Error)(`the server responded with status code ${code}: ${text.slice(0, 200)}`));
            }
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(new Error('the answer is not JSON'));
            }
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.name === 'AbortError' && (err.cause as Error | undefined)?.name === 'TimeoutError') reject(err.cause);
        else if (err.code === 'ECONNRESET') reject(new RetriableError(err.message));
        else reject(err);
      });
      req.end(data);
    });
  }
}

/**
 * The cache key: every attribute the review is built from, in a fixed order. (Kubernetes keys by
 * the serialized review spec; this names the same facts, plus the path, without building the spec
 * on every cached request.)
 */
function cacheKey(a: AuthorizationAttributes): string {
  const u = a.user;
  return JSON.stringify([
    u.username,
    u.uid,
    u.groups,
    u.extra,
    a.verb,
    a.isResourceRequest,
    a.apiGroup,
    a.apiVersion,
    a.resource,
    a.subresource,
    a.namespace,
    a.name,
    a.fieldSelector,
    a.labelSelector,
    a.path,
  ]);
}

function cacheable(a: AuthorizationAttributes): boolean {
  const size = [a.namespace, a.verb, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.name, a.path].reduce((n, s) => n + (s?.length ?? 0), 0);
  return size < MAX_CACHED_ATTRIBUTE_BYTES;
}
