/**
 * Reading a verified token's claims the way kube-apiserver's OIDC authenticator does: the time and
 * audience checks of go-oidc plus kube's multi-audience rule, required claims (claim/requiredValue),
 * and the claim-based mappings of username (with the email_verified rule), groups and uid.
 * Expression-based rules and mappings are evaluated elsewhere (claim-expressions.ts).
 */
import type { ClaimMappings, ClaimValidationRule } from '../config/authentication.js';

export type Claims = Record<string, unknown>;

/** go-oidc accepts a not-before up to this far in the future (clock skew between issuer and server). */
export const NBF_LEEWAY_SECONDS = 5 * 60;

export class ClaimError extends Error {}

const has = (c: Claims, name: string): boolean => Object.hasOwn(c, name);

/** The claim as a string, as Go's json.Unmarshal into a string would accept it. */
function stringClaim(c: Claims, name: string, what: string): string {
  if (!has(c, name)) throw new ClaimError(`oidc: parse ${what} ${JSON.stringify(name)}: claim not present`);
  const v = c[name];
  // A JSON null leaves a Go string empty without error.
  if (v === null) return '';
  if (typeof v !== 'string') throw new ClaimError(`oidc: parse ${what} ${JSON.stringify(name)}: json: cannot unmarshal ${jsonType(v)} into Go value of type string`);
  return v;
}

const jsonType = (v: unknown): string => (Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/** Go's stringOrArray: a string is a one-element list; null is no list. */
function stringOrArray(c: Claims, name: string): string[] {
  const v = c[name];
  if (v === null) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((e) => typeof e === 'string' || e === null)) return v.map((e) => (e === null ? '' : (e as string)));
  throw new ClaimError(`oidc: parse groups claim ${JSON.stringify(name)}: json: cannot unmarshal ${jsonType(v)} into Go value of type string`);
}

function numericDate(c: Claims, name: string): number | undefined {
  if (!has(c, name)) return undefined;
  const v = c[name];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ClaimError(`oidc: failed to unmarshal claims: the ${name} claim is not a number`);
  return v;
}

const timeOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * The registered claims: iss (exactly the issuer URL), aud (one of the audiences: MatchAny), exp
 * (required, not passed), nbf (not ahead by more than the leeway), iat (a number, not in the future
 * beyond the same leeway).
 */
export function checkRegisteredClaims(c: Claims, o: { issuer: string; audiences: readonly string[]; nowSeconds: number }): void {
  if (c.iss !== o.issuer) throw new ClaimError(`oidc: id token issued by a different provider, expected ${JSON.stringify(o.issuer)} got ${JSON.stringify(c.iss)}`);
  const aud = typeof c.aud === 'string' ? [c.aud] : Array.isArray(c.aud) ? c.aud.filter((a): a is string => typeof a === 'string') : [];
  if (!aud.some((a) => o.audiences.includes(a))) {
    throw new ClaimError(`oidc: expected audience in ${JSON.stringify(o.audiences)} got ${JSON.stringify(aud)}`);
  }
  const exp = numericDate(c, 'exp');
  if (exp === undefined) throw new ClaimError('oidc: token has no exp claim');
  if (exp < o.nowSeconds) throw new ClaimError(`oidc: token is expired (Token Expiry: ${timeOf(exp)})`);
  const nbf = numericDate(c, 'nbf');
  if (nbf !== undefined && nbf > o.nowSeconds + NBF_LEEWAY_SECONDS) {
    throw new ClaimError(`oidc: current time ${timeOf(o.nowSeconds)} before the nbf (not before) time: ${timeOf(nbf)}`);
  }
  const iat = numericDate(c, 'iat');
  if (iat !== undefined && iat > o.nowSeconds + NBF_LEEWAY_SECONDS) throw new ClaimError(`oidc: token issued in the future (iat ${timeOf(iat)})`);
}

/** claimValidationRules of the claim form: the claim present, a string, equal to requiredValue. */
export function checkRequiredClaims(c: Claims, rules: readonly ClaimValidationRule[]): void {
  for (const rule of rules) {
    if (!('claim' in rule)) continue;
    if (!has(c, rule.claim)) throw new ClaimError(`oidc: required claim ${rule.claim} not present in ID token`);
    const v = c[rule.claim];
    if (v !== null && typeof v !== 'string') throw new ClaimError(`oidc: parse claim ${rule.claim}: json: cannot unmarshal ${jsonType(v)} into Go value of type string`);
    const got = v ?? '';
    if (got !== rule.requiredValue) {
      throw new ClaimError(`oidc: required claim ${rule.claim} value does not match. Got = ${got}, want = ${rule.requiredValue}`);
    }
  }
}

/** username from its claim, with the email_verified rule and the prefix. */
export function usernameFromClaim(c: Claims, m: ClaimMappings['username']): string {
  const claim = m.claim!;
  const username = stringClaim(c, claim, 'username claims');
  if (claim === 'email' && has(c, 'email_verified')) {
    const verified = c.email_verified;
    if (typeof verified !== 'boolean') throw new ClaimError(`oidc: parse 'email_verified' claim: json: cannot unmarshal ${jsonType(verified)} into Go value of type bool`);
    if (!verified) throw new ClaimError('oidc: email not verified');
  }
  return m.prefix ? m.prefix + username : username;
}

/** groups from their claim (string or string list), each with the prefix; an absent claim is no groups. */
export function groupsFromClaim(c: Claims, m: NonNullable<ClaimMappings['groups']>): string[] {
  const claim = m.claim!;
  if (!has(c, claim)) return [];
  const groups = stringOrArray(c, claim);
  return m.prefix ? groups.map((g) => m.prefix + g) : groups;
}

export function uidFromClaim(c: Claims, claim: string): string {
  return stringClaim(c, claim, 'uid claim');
}

/**
 * The `iss` of a token, read without verifying it: it only chooses which authenticator (each has a
 * distinct issuer) gets to verify the token. undefined when the token is not a compact JWT.
 */
export function untrustedIssuer(token: string): string | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null) return undefined;
    const iss = (payload as Claims).iss;
    if (typeof iss !== 'string') return undefined;
    // Google's legacy issuer name, coalesced as kube does.
    return iss === 'accounts.google.com' ? 'https://accounts.google.com' : iss;
  } catch {
    return undefined;
  }
}
