/**
 * AuthenticationConfiguration (apiserver.orch.io/v1beta1 and apiserver.config.orch.io/v1): JWT
 * authenticators and anonymous access. Validation follows kube-apiserver's: unique issuer and
 * discovery URLs, https issuers, audiences with their match policy, claim rules that are either a
 * claim or an expression, the username mapping with its explicit prefix, and the email_verified rule.
 *
 * CEL expressions are only required to be non-empty (and unique where Kubernetes requires it) here;
 * compiling them against the claims and user variables comes with the CEL issue (9).
 */
import { FieldPath, duplicate, invalid, required, tooMany, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { arrayOf, bool, obj, str, type Schema } from '../api/schema.js';
import { Seen, certificateAuthorityErrors, domainPrefixedPathErrors, httpsURLErrors, objectOf, objectsOf, optBool, optString, stringOf, stringsOf } from './checks.js';
import { V1, V1BETA1, type DocumentKind, type ReadContext } from './document.js';

export type AudienceMatchPolicy = 'MatchAny';
export type IssuerEgressSelector = 'controlplane' | 'cluster';

export interface Issuer {
  url: string;
  discoveryURL?: string;
  /** PEM text. */
  certificateAuthority?: string;
  audiences: string[];
  audienceMatchPolicy?: AudienceMatchPolicy;
  /** v1 only. */
  egressSelectorType?: IssuerEgressSelector;
}

/** Either a required claim (with its value, '' when unset) or a CEL expression with its message. */
export type ClaimValidationRule = { claim: string; requiredValue: string } | { expression: string; message?: string };

/** Set fields only: `prefix` present (even '') is how "prefix given" is told from "prefix unset". */
export interface PrefixedClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: string;
}
export interface ClaimOrExpression {
  claim?: string;
  expression?: string;
}
export interface ExtraMapping {
  key: string;
  valueExpression: string;
}
export interface ClaimMappings {
  username: PrefixedClaimOrExpression;
  groups?: PrefixedClaimOrExpression;
  uid?: ClaimOrExpression;
  extra: ExtraMapping[];
}
export interface UserValidationRule {
  expression: string;
  message?: string;
}
export interface JWTAuthenticator {
  issuer: Issuer;
  claimValidationRules: ClaimValidationRule[];
  claimMappings: ClaimMappings;
  userValidationRules: UserValidationRule[];
}
export interface AnonymousAuthConfig {
  enabled: boolean;
  /** Empty: anonymous requests are allowed on every path (when enabled). */
  conditions: { path: string }[];
}
export interface AuthenticationConfiguration {
  jwt: JWTAuthenticator[];
  /** Absent: the document leaves anonymous access to the server's default. */
  anonymous?: AnonymousAuthConfig;
}

/** kube-apiserver caps the authenticators of one file. */
export const MAX_JWT_AUTHENTICATORS = 64;
/** Extra keys under these domains belong to the server (Kubernetes reserves k8s.io and kubernetes.io). */
const RESERVED_EXTRA_DOMAINS = ['orch.io', 'k8s.io', 'kubernetes.io'];

function schemaFor(v1: boolean): Schema {
  const prefixed = obj(undefined, { claim: str(), prefix: str(), expression: str() });
  const issuer: Record<string, Schema> = {
    url: str(),
    discoveryURL: str(),
    certificateAuthority: str(),
    audiences: arrayOf(str()),
    audienceMatchPolicy: str(),
  };
  if (v1) issuer.egressSelectorType = str();
  return obj(undefined, {
    apiVersion: str(),
    kind: str(),
    jwt: arrayOf(
      obj(undefined, {
        issuer: obj(undefined, issuer),
        claimValidationRules: arrayOf(obj(undefined, { claim: str(), requiredValue: str(), expression: str(), message: str() })),
        claimMappings: obj(undefined, {
          username: prefixed,
          groups: prefixed,
          uid: obj(undefined, { claim: str(), expression: str() }),
          extra: arrayOf(obj(undefined, { key: str(), valueExpression: str() })),
        }),
        userValidationRules: arrayOf(obj(undefined, { expression: str(), message: str() })),
      }),
    ),
    anonymous: obj(undefined, { enabled: bool(), conditions: arrayOf(obj(undefined, { path: str() })) }),
  });
}

/*
 * Whether an expression reads claims.email or claims.email_verified. Kubernetes walks the compiled
 * AST; until CEL lands this looks at the text (`claims.email`, `claims.?email`), which a string
 * literal holding those words can fool.
 */
const selects = (expression: string, field: string): boolean => new RegExp(`\\bclaims\\s*\\.\\s*\\??\\s*${field}(?![A-Za-z0-9_])`).test(expression);

function readIssuer(o: JsonObject | undefined, path: FieldPath, errs: FieldError[]): Issuer {
  const url = stringOf(o, 'url');
  const discoveryURL = optString(o, 'discoveryURL');
  const certificateAuthority = optString(o, 'certificateAuthority');
  const audiences = stringsOf(o, 'audiences');
  const audienceMatchPolicy = optString(o, 'audienceMatchPolicy');
  const egressSelectorType = optString(o, 'egressSelectorType');

  if (url === '') errs.push(required(path.child('url')));
  else errs.push(...httpsURLErrors(url, path.child('url')));

  if (discoveryURL) {
    if (url && url.replace(/\/+$/, '') === discoveryURL.replace(/\/+$/, '')) {
      errs.push(invalid(path.child('discoveryURL'), discoveryURL, 'discoveryURL must be different from URL'));
    }
    errs.push(...httpsURLErrors(discoveryURL, path.child('discoveryURL')));
  }

  const audPath = path.child('audiences');
  if (audiences.length === 0) errs.push(required(audPath, `at least one ${audPath} is required`));
  const seenAud = new Seen();
  audiences.forEach((a, i) => {
    if (a === '') errs.push(required(audPath.index(i)));
    if (seenAud.repeat(a)) errs.push(duplicate(audPath.index(i), a));
  });
  if (audiences.length > 1 && audienceMatchPolicy !== 'MatchAny') {
    errs.push(invalid(path.child('audienceMatchPolicy'), audienceMatchPolicy ?? '', 'audienceMatchPolicy must be MatchAny for multiple audiences'));
  }
  if (audiences.length === 1 && audienceMatchPolicy && audienceMatchPolicy !== 'MatchAny') {
    errs.push(invalid(path.child('audienceMatchPolicy'), audienceMatchPolicy, 'audienceMatchPolicy must be empty or MatchAny for single audience'));
  }

  if (certificateAuthority) errs.push(...certificateAuthorityErrors(certificateAuthority, path.child('certificateAuthority')));

  if (egressSelectorType && egressSelectorType !== 'controlplane' && egressSelectorType !== 'cluster') {
    errs.push(invalid(path.child('egressSelectorType'), egressSelectorType, 'egress selector must be either controlplane or cluster'));
  }
  return {
    url,
    ...(discoveryURL ? { discoveryURL } : {}),
    ...(certificateAuthority ? { certificateAuthority } : {}),
    audiences,
    ...(audienceMatchPolicy ? { audienceMatchPolicy: audienceMatchPolicy as AudienceMatchPolicy } : {}),
    ...(egressSelectorType ? { egressSelectorType: egressSelectorType as IssuerEgressSelector } : {}),
  };
}

function readClaimValidationRules(list: JsonObject[], path: FieldPath, errs: FieldError[]): ClaimValidationRule[] {
  const seenClaims = new Seen();
  const seenExpressions = new Seen();
  return list.map((o, i) => {
    const p = path.index(i);
    const claim = stringOf(o, 'claim');
    const requiredValue = stringOf(o, 'requiredValue');
    const expression = stringOf(o, 'expression');
    const message = stringOf(o, 'message');
    if (claim && expression) errs.push(invalid(p, claim, "claim and expression can't both be set"));
    else if (!claim && !expression) errs.push(required(p, 'claim or expression is required'));
    else if (claim) {
      if (message) errs.push(invalid(p.child('message'), message, 'may not be specified when claim is set'));
      if (seenClaims.repeat(claim)) errs.push(duplicate(p.child('claim'), claim));
    } else {
      if (requiredValue) errs.push(invalid(p.child('requiredValue'), requiredValue, 'may not be specified when expression is set'));
      if (seenExpressions.repeat(expression)) errs.push(duplicate(p.child('expression'), expression));
    }
    return claim ? { claim, requiredValue } : { expression, ...(message ? { message } : {}) };
  });
}

function readPrefixed(o: JsonObject | undefined, path: FieldPath, isRequired: boolean, errs: FieldError[]): PrefixedClaimOrExpression {
  const claim = stringOf(o, 'claim');
  const expression = stringOf(o, 'expression');
  const prefix = optString(o, 'prefix');
  if (claim && expression) errs.push(invalid(path, '', "claim and expression can't both be set"));
  else if (!claim && !expression && isRequired) errs.push(required(path, 'claim or expression is required'));
  else if (expression) {
    if (prefix !== undefined) errs.push(invalid(path.child('prefix'), prefix, 'may not be specified when expression is set'));
  } else if (claim && prefix === undefined) {
    errs.push(required(path.child('prefix'), 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
  }
  return { ...(claim ? { claim } : {}), ...(prefix !== undefined ? { prefix } : {}), ...(expression ? { expression } : {}) };
}

function readClaimMappings(o: JsonObject | undefined, path: FieldPath, claimRules: ClaimValidationRule[], errs: FieldError[]): ClaimMappings {
  const username = readPrefixed(objectOf(o, 'username'), path.child('username'), true, errs);
  const groupsObj = objectOf(o, 'groups');
  const groups = groupsObj ? readPrefixed(groupsObj, path.child('groups'), false, errs) : undefined;

  const uidObj = objectOf(o, 'uid');
  const uid: ClaimOrExpression | undefined = uidObj
    ? { ...(stringOf(uidObj, 'claim') ? { claim: stringOf(uidObj, 'claim') } : {}), ...(stringOf(uidObj, 'expression') ? { expression: stringOf(uidObj, 'expression') } : {}) }
    : undefined;
  if (uid?.claim && uid.expression) errs.push(invalid(path.child('uid'), '', "claim and expression can't both be set"));

  const seenKeys = new Seen();
  const extra = objectsOf(o, 'extra').map((m, i) => {
    const p = path.child('extra').index(i);
    const key = stringOf(m, 'key');
    const valueExpression = stringOf(m, 'valueExpression');
    errs.push(...domainPrefixedPathErrors(key, p.child('key')));
    if (key !== key.toLowerCase()) errs.push(invalid(p.child('key'), key, 'must be lowercase'));
    const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    if (RESERVED_EXTRA_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`))) {
      errs.push(invalid(p.child('key'), key, `${RESERVED_EXTRA_DOMAINS.join(', ')} and their subdomains are reserved for the server's use`));
    }
    if (seenKeys.repeat(key)) errs.push(duplicate(p.child('key'), key));
    else if (valueExpression === '') errs.push(required(p.child('valueExpression')));
    return { key, valueExpression };
  });

  // claims.email as a username must come with a check of claims.email_verified somewhere.
  if (username.expression && selects(username.expression, 'email')) {
    const verified = [username.expression, ...extra.map((e) => e.valueExpression), ...claimRules.flatMap((r) => ('expression' in r ? [r.expression] : []))].some((e) => selects(e, 'email_verified'));
    if (!verified) {
      errs.push(
        invalid(
          path.child('username', 'expression'),
          username.expression,
          'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
        ),
      );
    }
  }
  return { username, ...(groups ? { groups } : {}), ...(uid ? { uid } : {}), extra };
}

function readUserValidationRules(list: JsonObject[], path: FieldPath, errs: FieldError[]): UserValidationRule[] {
  const seen = new Seen();
  return list.map((o, i) => {
    const p = path.index(i).child('expression');
    const expression = stringOf(o, 'expression');
    const message = stringOf(o, 'message');
    if (expression === '') errs.push(required(p));
    else if (seen.repeat(expression)) errs.push(duplicate(p, expression));
    return { expression, ...(message ? { message } : {}) };
  });
}

function readAuthentication(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: AuthenticationConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const jwtPath = root.child('jwt');
  const list = objectsOf(doc, 'jwt');
  // Zero authenticators is allowed: a file may configure only anonymous access.
  if (list.length > MAX_JWT_AUTHENTICATORS) return { value: { jwt: [] }, errors: [tooMany(jwtPath, list.length, MAX_JWT_AUTHENTICATORS)] };

  const seenIssuers = new Seen();
  const seenDiscovery = new Seen();
  const jwt = list.map((a, i): JWTAuthenticator => {
    const p = jwtPath.index(i);
    const issuer = readIssuer(objectOf(a, 'issuer'), p.child('issuer'), errs);
    const claimValidationRules = readClaimValidationRules(objectsOf(a, 'claimValidationRules'), p.child('claimValidationRules'), errs);
    const claimMappings = readClaimMappings(objectOf(a, 'claimMappings'), p.child('claimMappings'), claimValidationRules, errs);
    const userValidationRules = readUserValidationRules(objectsOf(a, 'userValidationRules'), p.child('userValidationRules'), errs);
    if (seenIssuers.repeat(issuer.url)) errs.push(duplicate(p.child('issuer', 'url'), issuer.url));
    if (issuer.discoveryURL && seenDiscovery.repeat(issuer.discoveryURL)) errs.push(duplicate(p.child('issuer', 'discoveryURL'), issuer.discoveryURL));
    return { issuer, claimValidationRules, claimMappings, userValidationRules };
  });

  const anon = objectOf(doc, 'anonymous');
  let anonymous: AnonymousAuthConfig | undefined;
  if (anon) {
    const enabled = optBool(anon, 'enabled') ?? false;
    const condPath = root.child('anonymous', 'conditions');
    const conditions = objectsOf(anon, 'conditions').map((c, i) => {
      const path = stringOf(c, 'path');
      if (path === '') errs.push(required(condPath.index(i).child('path')));
      return { path };
    });
    if (!enabled && conditions.length > 0) errs.push(invalid(condPath, conditions, 'enabled should be set to true when conditions are defined'));
    anonymous = { enabled, conditions };
  }
  return { value: { jwt, ...(anonymous ? { anonymous } : {}) }, errors: errs };
}

export const authenticationDocument: DocumentKind<AuthenticationConfiguration> = {
  kind: 'AuthenticationConfiguration',
  schemas: { [V1BETA1]: schemaFor(false), [V1]: schemaFor(true) },
  read: readAuthentication,
};
