/**
 * The issuer's signing keys (JWKS), fetched on first use and cached. When a token's signature does
 * not verify with the cached keys (a `kid` not seen yet after the issuer rotated its keys, or a
 * kid-less token none of the keys verifies), the set is fetched again and the token retried, as
 * go-oidc's remote key set does; unlike go-oidc, refetches are rate limited (one per cooldown), so a
 * stream of forged tokens naming random kids cannot turn into a stream of requests to the issuer.
 */
import type { CompactJWSHeaderParameters, createLocalJWKSet, JSONWebKeySet } from 'jose';
import type { GetJson } from './issuer-client.js';

/** kube-apiserver's allow-list: asymmetric signatures only (no HMAC, no `none`). */
export const SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

type Key = CryptoKey;
type LocalSet = ReturnType<typeof createLocalJWKSet>;

/** jose, loaded when the first key set is fetched: a server without JWT authentication never loads it. */
let loaded: Promise<typeof import('jose')> | undefined;
const jose = () => (loaded ??= import('jose'));

export interface KeySetOptions {
  /** Least time between two fetches caused by unknown keys; default 1 s. */
  refetchCooldownMs?: number;
  now?: () => number;
}

export class RemoteKeySet {
  private local: LocalSet | undefined;
  private fetching: Promise<LocalSet> | undefined;
  private lastFetch = Number.NEGATIVE_INFINITY;
  /** How many times the set was fetched (metrics, tests). */
  fetches = 0;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(
    readonly uri: string,
    private readonly get: GetJson,
    opts: KeySetOptions = {},
  ) {
    this.cooldownMs = opts.refetchCooldownMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  private fetch(): Promise<LocalSet> {
    this.fetching ??= (async () => {
      this.lastFetch = this.now();
      this.fetches++;
      try {
        const jwks = await this.get(this.uri);
        const set = (await jose()).createLocalJWKSet(jwks as JSONWebKeySet);
        this.local = set;
        return set;
      } finally {
        this.fetching = undefined;
      }
    })();
    return this.fetching;
  }

  /**
   * The payload of a compact JWS whose signature one of the issuer's keys verifies, or a thrown
   * error saying why not.
   */
  async verify(token: string): Promise<Uint8Array> {
    const first = this.local ?? (await this.fetch());
    const attempt = await tryKeys(token, first);
    if (attempt.payload) return attempt.payload;
    // Unknown or non-verifying: the issuer may have rotated its keys since the last fetch.
    let next: LocalSet | undefined;
    if (this.fetching) next = await this.fetching.catch(() => undefined);
    else if (this.local !== first) next = this.local;
    else if (this.now() - this.lastFetch >= this.cooldownMs) {
      next = await this.fetch().catch((err: unknown) => {
        throw new Error(`${attempt.error.message}; fetching the issuer's keys again failed: ${(err as Error).message}`);
      });
    }
    if (!next || next === first) throw attempt.error;
    const again = await tryKeys(token, next);
    if (again.payload) return again.payload;
    throw again.error;
  }
}

async function candidates(set: LocalSet, header: CompactJWSHeaderParameters): Promise<Key[]> {
  const { errors } = await jose();
  try {
    return [(await set(header)) as Key];
  } catch (err) {
    if (err instanceof errors.JWKSMultipleMatchingKeys) {
      const keys: Key[] = [];
      for await (const k of err as unknown as AsyncIterable<Key>) keys.push(k);
      return keys;
    }
    if (err instanceof errors.JWKSNoMatchingKey) return [];
    throw err;
  }
}

async function tryKeys(token: string, set: LocalSet): Promise<{ payload?: Uint8Array; error: Error }> {
  const header = protectedHeader(token);
  const keys = await candidates(set, header);
  const { compactVerify, errors } = await jose();
  if (keys.length === 0) return { error: new Error(`oidc: no key in the issuer's key set matches kid ${JSON.stringify(header.kid ?? '')} and alg ${header.alg}`) };
  for (const key of keys) {
    try {
      const r = await compactVerify(token, key, { algorithms: [...SIGNING_ALGORITHMS] });
      return { payload: r.payload, error: new Error('') };
    } catch (err) {
      if (!(err instanceof errors.JWSSignatureVerificationFailed)) return { error: err as Error };
    }
  }
  return { error: new Error('failed to verify signature: failed to verify id token signature') };
}

/** The token's protected header, its algorithm checked against the allow-list before any key work. */
export function protectedHeader(token: string): CompactJWSHeaderParameters {
  const part = token.split('.')[0] ?? '';
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new Error('malformed jwt: the header is not base64url JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new Error('malformed jwt: the header is not a JSON object');
  const alg = (header as { alg?: unknown }).alg;
  if (typeof alg !== 'string' || !(SIGNING_ALGORITHMS as readonly string[]).includes(alg)) {
    throw new Error(`oidc: id token signed with unsupported algorithm, expected ${JSON.stringify(SIGNING_ALGORITHMS)} got ${JSON.stringify(alg)}`);
  }
  return header as CompactJWSHeaderParameters;
}
