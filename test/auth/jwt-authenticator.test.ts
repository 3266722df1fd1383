/**
 * The request authenticator against a real OIDC issuer on 127.0.0.1 (HTTPS with its own CA,
 * discovery, JWKS): token verification, registered claims, claim rules, claim mappings, key
 * rotation, discovery rules and anonymous access. Configurations go through the real loader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { authenticationDocument, type AuthenticationConfiguration } from '../../src/config/authentication.js';
import { loadDocumentText } from '../../src/config/load.js';
import { RequestAuthenticator, type AuthOutcome } from '../../src/auth/authenticate.js';
import { TestIssuer } from './oidc-issuer.js';
import { sleep } from '../helpers/poll.js';

const issuer = new TestIssuer();
const open: RequestAuthenticator[] = [];

beforeAll(async () => {
  await issuer.start();
});
afterAll(async () => {
  for (const a of open) a.close();
  await issuer.stop();
});

function config(jwt: Record<string, unknown>[], anonymous?: unknown): AuthenticationConfiguration {
  const doc = { apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthenticationConfiguration', jwt, ...(anonymous !== undefined ? { anonymous } : {}) };
  const r = loadDocumentText('auth.yaml', stringify(doc), authenticationDocument);
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.document.value;
}

const jwtEntry = (o: { issuer?: Record<string, unknown>; claimMappings?: Record<string, unknown>; claimValidationRules?: unknown[] } = {}) => ({
  issuer: { url: issuer.url, certificateAuthority: issuer.pki.caPem, audiences: ['orchd'], ...o.issuer },
  claimMappings: o.claimMappings ?? { username: { claim: 'sub', prefix: 'oidc:' } },
  ...(o.claimValidationRules ? { claimValidationRules: o.claimValidationRules } : {}),
});

function authenticator(cfg: AuthenticationConfiguration, opts: ConstructorParameters<typeof RequestAuthenticator>[1] = {}): RequestAuthenticator {
  const a = new RequestAuthenticator(cfg, { successTtlMs: 0, ...opts });
  a.start();
  open.push(a);
  return a;
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const userOf = (o: AuthOutcome) => (o.ok ? o.user : undefined);
const reasonOf = (o: AuthOutcome) => (o.ok ? '' : o.reason);

describe('JWT authenticator', () => {
  it('accepts a token of the issuer and maps the user with prefix and system:authenticated', async () => {
    const a = authenticator(config([jwtEntry()]));
    const r = await a.authenticate(bearer(await issuer.token()), '/api');
    expect(userOf(r)).toEqual({ username: 'oidc:alice', uid: '', groups: ['system:authenticated'], extra: {} });
  });

  it('refuses expired, not-yet-valid, future-issued, wrong-audience and wrong-issuer tokens, and bad signatures', async () => {
    const a = authenticator(config([jwtEntry()]));
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, string, RegExp][] = [
      ['expired', await issuer.token({ claims: { exp: now - 10 } }), /token is expired/],
      ['no exp', await issuer.token({ claims: { exp: undefined } }), /no exp claim/],
      ['nbf ahead', await issuer.token({ claims: { nbf: now + 3600 } }), /before the nbf/],
      ['iat ahead', await issuer.token({ claims: { iat: now + 3600 } }), /issued in the future/],
      ['audience', await issuer.token({ claims: { aud: ['someone-else'] } }), /expected audience in \["orchd"\]/],
      ['issuer', await issuer.token({ claims: { iss: 'https://127.0.0.1:1' } }), /invalid bearer token/],
      ['signature', await issuer.token({ foreignKey: true }), /failed to verify signature/],
      ['not a jwt', 'abc.def', /invalid bearer token/],
    ];
    for (const [name, token, want] of cases) {
      const r = await a.authenticate(bearer(token), '/api');
      expect(r.ok, name).toBe(false);
      expect(reasonOf(r), name).toMatch(want);
    }
    // A not-before within go-oidc's 5 minute leeway is accepted (clock skew).
    expect((await a.authenticate(bearer(await issuer.token({ claims: { nbf: now + 60 } })), '/api')).ok).toBe(true);
    // aud as a single string is accepted too.
    expect((await a.authenticate(bearer(await issuer.token({ claims: { aud: 'orchd' } })), '/api')).ok).toBe(true);
  });

  it('refuses an unsigned or HMAC token whatever its claims', async () => {
    const a = authenticator(config([jwtEntry()]));
    const good = await issuer.token();
    const [, payload] = good.split('.');
    for (const alg of ['none', 'HS256']) {
      const header = Buffer.from(JSON.stringify({ alg, kid: 'key-1' })).toString('base64url');
      const r = await a.authenticate(bearer(`${header}.${payload}.`), '/api');
      expect(r.ok).toBe(false);
      expect(reasonOf(r)).toMatch(/unsupported algorithm/);
    }
  });

  it('matches any of several audiences (MatchAny)', async () => {
    const a = authenticator(config([jwtEntry({ issuer: { audiences: ['first', 'second'], audienceMatchPolicy: 'MatchAny' } })]));
    expect((await a.authenticate(bearer(await issuer.token({ claims: { aud: ['x', 'second'] } })), '/')).ok).toBe(true);
    expect((await a.authenticate(bearer(await issuer.token({ claims: { aud: ['orchd'] } })), '/')).ok).toBe(false);
  });

  it('applies claimValidationRules of the claim form: present, a string, equal', async () => {
    const a = authenticator(config([jwtEntry({ claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }, { claim: 'tenant' }] })]));
    const ok = await a.authenticate(bearer(await issuer.token({ claims: { hd: 'example.com', tenant: '' } })), '/');
    expect(ok.ok).toBe(true);
    const missing = await a.authenticate(bearer(await issuer.token({ claims: { tenant: '' } })), '/');
    expect(reasonOf(missing)).toBe('oidc: required claim hd not present in ID token');
    const wrong = await a.authenticate(bearer(await issuer.token({ claims: { hd: 'evil.com', tenant: '' } })), '/');
    expect(reasonOf(wrong)).toBe('oidc: required claim hd value does not match. Got = evil.com, want = example.com');
    const notString = await a.authenticate(bearer(await issuer.token({ claims: { hd: 'example.com', tenant: 7 } })), '/');
    expect(reasonOf(notString)).toMatch(/parse claim tenant/);
  });

  it('maps groups (string or list, with prefix), uid, and refuses a username claim that is missing or not a string', async () => {
    const a = authenticator(config([jwtEntry({ claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'roles', prefix: 'oidc:' }, uid: { claim: 'oid' } } })]));
    const list = await a.authenticate(bearer(await issuer.token({ claims: { roles: ['dev', 'ops'], oid: 'u-1' } })), '/');
    expect(userOf(list)).toEqual({ username: 'alice', uid: 'u-1', groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'], extra: {} });
    const single = await a.authenticate(bearer(await issuer.token({ claims: { roles: 'admin', oid: 'u-2' } })), '/');
    expect(userOf(single)?.groups).toEqual(['oidc:admin', 'system:authenticated']);
    const none = await a.authenticate(bearer(await issuer.token({ claims: { oid: 'u-3' } })), '/');
    expect(userOf(none)?.groups).toEqual(['system:authenticated']);
    const badGroups = await a.authenticate(bearer(await issuer.token({ claims: { roles: [1, 2], oid: 'u' } })), '/');
    expect(reasonOf(badGroups)).toMatch(/parse groups claim "roles"/);
    const noUid = await a.authenticate(bearer(await issuer.token({ claims: { roles: [] } })), '/');
    expect(reasonOf(noUid)).toMatch(/parse uid claim "oid": claim not present/);
    const noSub = await a.authenticate(bearer(await issuer.token({ claims: { sub: undefined, oid: 'u' } })), '/');
    expect(reasonOf(noSub)).toMatch(/parse username claims "sub": claim not present/);
    const numericSub = await a.authenticate(bearer(await issuer.token({ claims: { sub: 42, oid: 'u' } })), '/');
    expect(reasonOf(numericSub)).toMatch(/cannot unmarshal number/);
  });

  it('with the email claim as username, refuses email_verified false and accepts it absent or true', async () => {
    const a = authenticator(config([jwtEntry({ claimMappings: { username: { claim: 'email', prefix: '' } } })]));
    const email = 'alice@example.com';
    expect(userOf(await a.authenticate(bearer(await issuer.token({ claims: { email, email_verified: true } })), '/'))?.username).toBe(email);
    expect(userOf(await a.authenticate(bearer(await issuer.token({ claims: { email } })), '/'))?.username).toBe(email);
    expect(reasonOf(await a.authenticate(bearer(await issuer.token({ claims: { email, email_verified: false } })), '/'))).toBe('oidc: email not verified');
    expect(reasonOf(await a.authenticate(bearer(await issuer.token({ claims: { email, email_verified: 'yes' } })), '/'))).toMatch(/parse 'email_verified' claim/);
  });

  it('fetches the keys again when a token names an unknown kid (rotation), at most once per cooldown', async () => {
    const rotating = await new TestIssuer().start();
    try {
      const a = authenticator(config([{ ...jwtEntry(), issuer: { url: rotating.url, certificateAuthority: rotating.pki.caPem, audiences: ['orchd'] } }]), {
        // Long enough that the forged tokens below are all tried within it on a loaded machine.
        refetchCooldownMs: 1500,
      });
      expect((await a.authenticate(bearer(await rotating.token()), '/')).ok).toBe(true);
      expect(rotating.jwksFetches).toBe(1);
      await sleep(1550);
      await rotating.rotate('key-2');
      const fresh = await rotating.token();
      const forged = await Promise.all([0, 1, 2, 3, 4].map((i) => rotating.token({ kid: `random-${i}` })));
      expect((await a.authenticate(bearer(fresh), '/')).ok).toBe(true);
      expect(rotating.jwksFetches).toBe(2);
      // Forged kids within the cooldown do not reach the issuer.
      for (const token of forged) expect((await a.authenticate(bearer(token), '/')).ok).toBe(false);
      expect(rotating.jwksFetches).toBe(2);
      // A kid-less token verifies against the set's keys.
      expect((await a.authenticate(bearer(await rotating.token({ omitKid: true })), '/')).ok).toBe(true);
    } finally {
      await rotating.stop();
    }
  });

  it('discovers at discoveryURL, requires the discovered issuer to be the url, and trusts only the configured CA', async () => {
    const viaDiscoveryURL = authenticator(config([jwtEntry({ issuer: { discoveryURL: `${issuer.url}/custom/discovery` } })]));
    const before = issuer.discoveryFetches;
    expect((await viaDiscoveryURL.authenticate(bearer(await issuer.token()), '/')).ok).toBe(true);
    expect(issuer.discoveryFetches).toBeGreaterThan(before);

    issuer.advertisedIssuer = 'https://elsewhere.example';
    try {
      const errors: string[] = [];
      const lying = authenticator(config([jwtEntry()]), { onInitError: (_i, e) => errors.push(e.message) });
      const r = await lying.authenticate(bearer(await issuer.token()), '/');
      expect(reasonOf(r)).toBe('oidc: authenticator not initialized');
      expect(errors[0]).toMatch(/issuer did not match the issuer returned by provider/);
    } finally {
      issuer.advertisedIssuer = undefined;
    }

    const errors: string[] = [];
    const untrusted = authenticator(config([jwtEntry({ issuer: { certificateAuthority: new TestIssuer().pki.caPem } })]), { onInitError: (_i, e) => errors.push(e.message) });
    expect(reasonOf(await untrusted.authenticate(bearer(await issuer.token()), '/'))).toBe('oidc: authenticator not initialized');
    expect(errors[0]).toMatch(/certificate/i);
  });

  it('tries authenticators in order and uses the one whose issuer the token names', async () => {
    const other = await new TestIssuer().start();
    try {
      const a = authenticator(
        config([jwtEntry(), { issuer: { url: other.url, certificateAuthority: other.pki.caPem, audiences: ['orchd'] }, claimMappings: { username: { claim: 'sub', prefix: 'other:' } } }]),
      );
      expect(userOf(await a.authenticate(bearer(await other.token()), '/'))?.username).toBe('other:alice');
      expect(userOf(await a.authenticate(bearer(await issuer.token()), '/'))?.username).toBe('oidc:alice');
    } finally {
      await other.stop();
    }
  });

  it('remembers an accepted token for the success TTL, never past its expiry', async () => {
    let now = Date.now();
    const a = authenticator(config([jwtEntry()]), { successTtlMs: 10_000, refetchCooldownMs: 0, now: () => now });
    const old = await issuer.token();
    const shortLived = await issuer.token({ claims: { exp: Math.floor(now / 1000) + 5 } });
    expect((await a.authenticate(bearer(old), '/')).ok).toBe(true);
    expect((await a.authenticate(bearer(shortLived), '/')).ok).toBe(true);
    // The issuer drops the old key; a token with the new one makes the server fetch the new set.
    await issuer.rotate('key-9', 'RS256');
    try {
      expect((await a.authenticate(bearer(await issuer.token()), '/')).ok).toBe(true);
      // Within the TTL the old token is still known good; past it, it is checked again and fails.
      expect((await a.authenticate(bearer(old), '/')).ok).toBe(true);
      now += 6_000;
      expect(reasonOf(await a.authenticate(bearer(shortLived), '/'))).toMatch(/no key|expired/);
      now += 5_000;
      expect(reasonOf(await a.authenticate(bearer(old), '/'))).toMatch(/no key in the issuer's key set matches kid "key-1"/);
    } finally {
      await issuer.rotate('key-1', 'RS256');
    }
  });
});

describe('anonymous access', () => {
  it('defaults to enabled everywhere; with enabled false a request without credentials is refused', async () => {
    const defaulted = authenticator(config([jwtEntry()]));
    expect(userOf(await defaulted.authenticate({}, '/api'))).toEqual({ username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} });
    const off = authenticator(config([jwtEntry()], { enabled: false }));
    expect((await off.authenticate({}, '/livez')).ok).toBe(false);
    // A malformed Authorization header is no credentials (kube's bearer authenticator passes).
    expect((await defaulted.authenticate({ authorization: 'Basic abc' }, '/api')).ok).toBe(true);
    expect((await off.authenticate({ authorization: 'Bearer ' }, '/api')).ok).toBe(false);
  });

  it('with conditions, allows only those exact paths', async () => {
    const a = authenticator(config([jwtEntry()], { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] }));
    expect((await a.authenticate({}, '/livez')).ok).toBe(true);
    expect((await a.authenticate({}, '/readyz')).ok).toBe(true);
    expect((await a.authenticate({}, '/livez/ping')).ok).toBe(false);
    expect((await a.authenticate({}, '/api')).ok).toBe(false);
  });

  it('never lets a bad token through as anonymous', async () => {
    const a = authenticator(config([jwtEntry()], { enabled: true }));
    expect((await a.authenticate(bearer('garbage'), '/api')).ok).toBe(false);
  });

  it('without any authenticator configured, a token is ignored and the request is anonymous', async () => {
    const a = authenticator(config([], { enabled: true }));
    expect(userOf(await a.authenticate(bearer('whatever'), '/api'))?.username).toBe('system:anonymous');
  });

  it('reads a WebSocket bearer subprotocol on upgrade requests', async () => {
    const a = authenticator(config([jwtEntry()], { enabled: false }));
    const token = await issuer.token();
    const headers = { upgrade: 'websocket', 'sec-websocket-protocol': `v4.channel.k8s.io, base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}` };
    expect(userOf(await a.authenticate(headers, '/api'))?.username).toBe('oidc:alice');
  });
});

describe('expressions (CEL)', () => {
  const celEntry = () =>
    jwtEntry({
      claimMappings: {
        username: { expression: "'oidc:' + claims.sub" },
        groups: { expression: "claims.roles.map(r, 'r:' + r)" },
        uid: { expression: "claims.sub + '-uid'" },
        extra: [{ key: 'example.com/team', valueExpression: 'claims.?team.orValue("")' }],
      },
      claimValidationRules: [{ expression: 'claims.hd == "example.com"', message: 'hd must be example.com' }],
    });

  it('map username, groups, uid and extra, and apply claim and user validation rules', async () => {
    const cfg = config([{ ...celEntry(), userValidationRules: [{ expression: "!user.username.startsWith('oidc:admin')", message: 'no admins here' }] }]);
    const a = authenticator(cfg);
    const base = { hd: 'example.com', roles: ['dev', ''] };
    const full = await a.authenticate(bearer(await issuer.token({ claims: { ...base, team: 'blue' } })), '/');
    expect(userOf(full)).toEqual({ username: 'oidc:alice', uid: 'alice-uid', groups: ['r:dev', 'r:', 'system:authenticated'], extra: { 'example.com/team': ['blue'] } });
    // An empty extra value is no value.
    expect(userOf(await a.authenticate(bearer(await issuer.token({ claims: base })), '/'))?.extra).toEqual({});
    const wrongHd = await a.authenticate(bearer(await issuer.token({ claims: { ...base, hd: 'evil.example' } })), '/');
    expect(reasonOf(wrongHd)).toBe(`oidc: error evaluating claim validation expression: validation expression 'claims.hd == "example.com"' failed: hd must be example.com`);
    const admin = await a.authenticate(bearer(await issuer.token({ claims: { ...base, sub: 'admin-1' } })), '/');
    expect(reasonOf(admin)).toBe("oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('oidc:admin')' failed: no admins here");
    const noRoles = await a.authenticate(bearer(await issuer.token({ claims: { hd: 'example.com' } })), '/');
    expect(reasonOf(noRoles)).toMatch(/^oidc: error evaluating group claim expression: /);
  });

  it('refuse a mapping whose value has the wrong type at run time', async () => {
    const a = authenticator(config([jwtEntry({ claimMappings: { username: { expression: 'claims.name' } } })]));
    expect(userOf(await a.authenticate(bearer(await issuer.token({ claims: { name: 'Alice' } })), '/'))?.username).toBe('Alice');
    const r = await a.authenticate(bearer(await issuer.token({ claims: { name: 42 } })), '/');
    expect(reasonOf(r)).toBe('oidc: error evaluating username claim expression: username claim expression must return a string');
  });

  it('that do not compile, or have the wrong static type, stop the start with every field path', () => {
    const cfg = config([
      jwtEntry({
        claimMappings: { username: { expression: '1 + 1' } },
        claimValidationRules: [{ expression: 'claims.hd ==', message: 'x' }],
      }),
    ]);
    let message = '';
    try {
      new RequestAuthenticator({ ...cfg, jwt: [{ ...cfg.jwt[0]!, userValidationRules: [{ expression: 'claims.sub == "x"' }] }] });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "1 \+ 1": compilation failed: must evaluate to string/m);
    expect(message).toMatch(/^jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value: "claims.hd ==": compilation failed: /m);
    // user validation rules see `user`, not `claims`.
    expect(message).toMatch(/^jwt\[0\]\.userValidationRules\[0\]\.expression: Invalid value: .*claims/m);
  });

  it('an extra or groups mapping that cannot be a string or a list of strings stops the start at its field path', () => {
    const start = (claimMappings: object) => {
      try {
        new RequestAuthenticator(config([jwtEntry({ claimMappings: { username: { expression: 'claims.sub' }, ...claimMappings } })]));
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    const message = start({
      groups: { expression: "claims.hd == 'example.com'" },
      extra: [
        { key: 'example.com/ok', valueExpression: 'claims.roles' },
        { key: 'example.com/number', valueExpression: '1' },
        { key: 'example.com/map', valueExpression: "{'a': 'b'}" },
        { key: 'example.com/list', valueExpression: "['a', 'b']" },
      ],
    });
    expect(message.split('\n').sort()).toEqual([
      'jwt[0].claimMappings.extra[1].valueExpression: Invalid value: "1": compilation failed: must evaluate to one of [string list(string)]',
      "jwt[0].claimMappings.extra[2].valueExpression: Invalid value: \"{'a': 'b'}\": compilation failed: must evaluate to one of [string list(string)]",
      'jwt[0].claimMappings.groups.expression: Invalid value: "claims.hd == \'example.com\'": compilation failed: must evaluate to one of [string list(string)]',
    ]);
    expect(start({ groups: { expression: "['a', claims.hd]" }, extra: [{ key: 'example.com/s', valueExpression: "'x'" }] })).toBe('');
  });

  it('are refused at start with their field paths when no CEL compiler is given', () => {
    expect(() => new RequestAuthenticator(config([celEntry()]), { compiler: undefined as never })).toThrow(/not supported/);
  });
});
