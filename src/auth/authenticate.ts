/**
 * The request authenticator: who is asking. A bearer token is offered to the JWT authenticators in
 * configuration order (at most one handles it: issuers are distinct); a token none accepts is
 * refused, never treated as anonymous. A request with no credentials is anonymous when anonymous
 * access allows its path, and refused otherwise. This is kube-apiserver's chain: union of token
 * authenticators, system:authenticated added, then anonymous only when the chain found nothing
 * and raised no error.
 *
 * Accepted tokens are remembered for 10 s (kube-apiserver's token success cache), never past their
 * expiry, so a client's stream of requests costs one signature check per token per 10 s.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthenticationConfiguration } from '../config/authentication.js';
import { anonymousPolicy, type AnonymousPolicy } from './anonymous.js';
import { bearerToken } from './bearer.js';
import { celClaimsCompiler } from './cel-claims.js';
import { JwtAuthenticator, type JwtAuthenticatorDeps } from './jwt-authenticator.js';
import { anonymousUser, withAuthenticatedGroup, type UserInfo } from './user.js';
import type { Sample } from '../observability/samples.js';

export type AuthOutcome = { ok: true; user: UserInfo } | { ok: false; reason: string };

/** What the HTTP server asks: who sent this request. */
export interface Authenticator {
  authenticate(headers: IncomingHttpHeaders, path: string): Promise<AuthOutcome>;
  /** Readings for /metrics, when the authenticator has any. */
  samples?(): Sample[];
}

export interface RequestAuthenticatorOptions extends JwtAuthenticatorDeps {
  successTtlMs?: number;
  maxCached?: number;
}

const SUCCESS_TTL_MS = 10_000;
const MAX_CACHED = 4096;

export class RequestAuthenticator implements Authenticator {
  readonly jwt: JwtAuthenticator[];
  private readonly anonymous: AnonymousPolicy;
  private readonly cache = new Map<string, { user: UserInfo; until: number }>();
  private readonly now: () => number;

  /**
   * No configuration: every request is anonymous (kube-apiserver with no token authenticators and
   * anonymous access on). Throws when an authenticator cannot be built (an expression that does
   * not compile), naming every such field.
   */
  constructor(
    config: AuthenticationConfiguration | undefined,
    private readonly opts: RequestAuthenticatorOptions = {},
  ) {
    const deps = { compiler: celClaimsCompiler, ...opts };
    this.jwt = (config?.jwt ?? []).map((a, i) => new JwtAuthenticator(a, `jwt[${i}]`, deps));
    this.anonymous = anonymousPolicy(config?.anonymous);
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    for (const a of this.jwt) a.start();
  }

  close(): void {
    for (const a of this.jwt) a.close();
  }

  /** The issuers whose discovery has not succeeded (after one attempt each). */
  async notReady(): Promise<string[]> {
    const ready = await Promise.all(this.jwt.map((a) => a.ready()));
    return this.jwt.filter((_, i) => !ready[i]).map((a) => a.issuer);
  }

  async authenticate(headers: IncomingHttpHeaders, path: string): Promise<AuthOutcome> {
    // With no token authenticator there is no bearer-token authenticator either: a token is ignored.
    const token = this.jwt.length > 0 ? bearerToken(headers) : undefined;
    if (token === undefined) {
      return this.anonymous(path) ? { ok: true, user: anonymousUser() } : { ok: false, reason: 'no credentials, and anonymous access is not allowed for this path' };
    }
    const key = createHash('sha256').update(token).digest('base64');
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return { ok: true, user: hit.user };
    if (hit) this.cache.delete(key);

    const errors: string[] = [];
    for (const a of this.jwt) {
      // An authenticator that fails unexpectedly refuses the token; it never turns into a 500.
      const r = await a.authenticate(token).catch((err: unknown) => ({ handled: true as const, error: `oidc: ${err instanceof Error ? err.message : String(err)}` }));
      if (!r.handled) continue;
      if ('error' in r) {
        errors.push(r.error);
        continue;
      }
      const user = withAuthenticatedGroup(r.user);
      this.remember(key, user, Math.min(now + (this.opts.successTtlMs ?? SUCCESS_TTL_MS), r.expiresAt));
      return { ok: true, user };
    }
    return { ok: false, reason: errors.length > 0 ? errors.join('; ') : 'invalid bearer token' };
  }

  private remember(key: string, user: UserInfo, until: number): void {
    if (this.cache.size >= (this.opts.maxCached ?? MAX_CACHED)) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, { user, until });
  }
}
