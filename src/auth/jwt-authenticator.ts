/**
 * One `jwt[]` entry of the AuthenticationConfiguration: a token whose (unverified) `iss` names this
 * issuer is verified against the issuer's keys (found through OIDC discovery), its registered claims
 * checked, the claim rules applied and the user mapped, in kube-apiserver's order. A token naming
 * another issuer is not this authenticator's business (`handled: false`).
 *
 * Discovery runs in the background from start() and is retried every 10 s until it succeeds, as
 * kube-apiserver does, so an issuer that comes up after orchd (or runs on it) is picked up. A token
 * that arrives while the first attempt is under way waits for it.
 */
import type { Agent as HttpsAgent } from 'node:https';
import type { JWTAuthenticator as JWTAuthenticatorConfig } from '../config/authentication.js';
import { ClaimError, checkRegisteredClaims, checkRequiredClaims, groupsFromClaim, uidFromClaim, untrustedIssuer, usernameFromClaim, type Claims } from './claims.js';
import { checkClaimRules, checkUserRules, compileJwtExpressions, evalExtra, evalString, evalStringList, type ExpressionCompiler, type JwtExpressions } from './claim-expressions.js';
import { issuerClient, type GetJson } from './issuer-client.js';
import { directEgress, type Egress } from '../egress/egress.js';
import { RemoteKeySet } from './jwks.js';
import { discover } from './oidc-discovery.js';
import type { UserInfo } from './user.js';

/** A vouched-for user comes with the token's expiry (ms since the epoch), past which no cache may keep it. */
export type TokenResult = { handled: false } | { handled: true; user: UserInfo; expiresAt: number } | { handled: true; error: string };

export interface JwtAuthenticatorDeps {
  /** Told about discovery failures (they are retried). */
  onInitError?: (issuer: string, err: Error) => void;
  onInitialized?: (issuer: string, jwksUri: string) => void;
  compiler?: ExpressionCompiler;
  /** Replaces the HTTPS client (which trusts certificateAuthority); tests. */
  get?: GetJson;
  /** How issuer connections are dialed when the issuer names an `egressSelectorType`; default direct. */
  egress?: Egress;
  now?: () => number;
  retryMs?: number;
  refetchCooldownMs?: number;
}

const RETRY_MS = 10_000;

/** The issuer's CA, and with an egressSelectorType the agent of that selection (trusting that CA). */
function issuerConnection(issuer: JWTAuthenticatorConfig['issuer'], egress: Egress = directEgress): { certificateAuthority?: string; agent?: HttpsAgent } {
  const ca = issuer.certificateAuthority;
  if (!issuer.egressSelectorType) return ca ? { certificateAuthority: ca } : {};
  return { agent: egress.httpsAgent(issuer.egressSelectorType, ca ? { ca } : {}) };
}

export class JwtAuthenticator {
  readonly issuer: string;
  private keys: RemoteKeySet | undefined;
  private attempt: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly expressions: JwtExpressions;
  private readonly get: GetJson;
  /** The egress selection's kept-alive connections, closed with the authenticator. */
  private readonly agent: HttpsAgent | undefined;
  private readonly now: () => number;

  /** Throws when an expression does not compile (or CEL is unavailable): the start must fail. */
  constructor(
    private readonly config: JWTAuthenticatorConfig,
    path: string,
    private readonly deps: JwtAuthenticatorDeps = {},
  ) {
    this.issuer = config.issuer.url;
    this.expressions = compileJwtExpressions(config, deps.compiler, path);
    const connection = deps.get ? undefined : issuerConnection(config.issuer, deps.egress);
    this.agent = connection?.agent;
    this.get = deps.get ?? issuerClient(connection);
    this.now = deps.now ?? Date.now;
  }

  /** The key set, once discovery succeeded (metrics, tests). */
  get keySet(): RemoteKeySet | undefined {
    return this.keys;
  }

  start(): void {
    if (this.attempt || this.keys || this.closed) return;
    this.attempt = (async () => {
      try {
        const meta = await discover(this.get, this.issuer, this.config.issuer.discoveryURL);
        if (this.closed) return;
        this.keys = new RemoteKeySet(meta.jwksUri, this.get, { now: this.now, ...(this.deps.refetchCooldownMs !== undefined ? { refetchCooldownMs: this.deps.refetchCooldownMs } : {}) });
        this.deps.onInitialized?.(this.issuer, meta.jwksUri);
      } catch (err) {
        this.deps.onInitError?.(this.issuer, err as Error);
        if (!this.closed) {
          this.retry = setTimeout(() => this.start(), this.deps.retryMs ?? RETRY_MS);
          this.retry.unref();
        }
      } finally {
        this.attempt = undefined;
      }
    })();
  }

  /** Whether discovery has succeeded, after waiting for an attempt (started now if none is under way). */
  async ready(): Promise<boolean> {
    if (this.keys) return true;
    this.start();
    await this.attempt;
    return this.keys !== undefined;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.agent?.destroy();
  }

  async authenticate(token: string): Promise<TokenResult> {
    if (untrustedIssuer(token) !== this.issuer) return { handled: false };
    if (!this.keys && this.attempt) await this.attempt;
    const keys = this.keys;
    if (!keys) return { handled: true, error: 'oidc: authenticator not initialized' };
    try {
      let payload: Uint8Array;
      try {
        payload = await keys.verify(token);
      } catch (err) {
        return { handled: true, error: `oidc: verify token: ${(err as Error).message}` };
      }
      let claims: Claims;
      try {
        const parsed: unknown = JSON.parse(Buffer.from(payload).toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
        claims = parsed as Claims;
      } catch (err) {
        return { handled: true, error: `oidc: verify token: oidc: failed to unmarshal claims: ${(err as Error).message}` };
      }
      try {
        checkRegisteredClaims(claims, { issuer: this.issuer, audiences: this.config.issuer.audiences, nowSeconds: this.now() / 1000 });
      } catch (err) {
        return { handled: true, error: `oidc: verify token: ${(err as Error).message}` };
      }
      return { handled: true, user: this.userOf(claims), expiresAt: (claims.exp as number) * 1000 };
    } catch (err) {
      if (err instanceof ClaimError) return { handled: true, error: err.message };
      throw err;
    }
  }

  /** Mapping and validation after the token is known to be genuine, in kube-apiserver's order. */
  private userOf(claims: Claims): UserInfo {
    const m = this.config.claimMappings;
    const x = this.expressions;
    const username = x.username ? evalString(x.username, claims, 'username') : usernameFromClaim(claims, m.username);
    const groups = m.groups?.claim ? groupsFromClaim(claims, m.groups) : x.groups ? evalStringList(x.groups, claims, 'group claim expression') : [];
    const uid = m.uid?.claim ? uidFromClaim(claims, m.uid.claim) : x.uid ? evalString(x.uid, claims, 'uid') : '';
    const extra = evalExtra(x, claims);
    const user: UserInfo = { username, uid, groups, extra };
    checkRequiredClaims(claims, this.config.claimValidationRules);
    checkClaimRules(x, claims);
    checkUserRules(x, user);
    return user;
  }
}
