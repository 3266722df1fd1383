import { describe, expect, it } from 'vitest';
import { authenticationDocument } from '../../src/config/authentication.js';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { check, clone, makeCertificate } from './support.js';
import { tempDir } from '../helpers/temp.js';

type Doc = any;

const base = (): Doc => ({
  apiVersion: V1,
  kind: 'AuthenticationConfiguration',
  jwt: [
    {
      issuer: { url: 'https://issuer.example.com', audiences: ['orchd'] },
      claimMappings: { username: { claim: 'sub', prefix: '' } },
    },
  ],
});

interface Row {
  name: string;
  edit: (d: Doc) => void;
  /** [type, field] expected, exactly; empty: the document is valid. */
  want: [string, string][];
}

const jwt0 = 'jwt[0]';
const second = (d: Doc, edit: (a: Doc) => void = () => {}) => {
  const a = clone(d.jwt[0]);
  a.issuer.url = 'https://other.example.com';
  edit(a);
  d.jwt.push(a);
};

const rows: Row[] = [
  { name: 'the base document', edit: () => {}, want: [] },
  {
    name: 'no authenticators at all (anonymous only)',
    edit: (d) => {
      delete d.jwt;
      d.anonymous = { enabled: true };
    },
    want: [],
  },
  {
    name: 'more than 64 authenticators',
    edit: (d) => {
      d.jwt = Array.from({ length: 65 }, (_, i) => ({ ...clone(d.jwt[0]), issuer: { url: `https://i${i}.example.com`, audiences: ['a'] } }));
    },
    want: [['FieldValueTooMany', 'jwt']],
  },
  {
    name: '64 authenticators',
    edit: (d) => {
      d.jwt = Array.from({ length: 64 }, (_, i) => ({ ...clone(d.jwt[0]), issuer: { url: `https://i${i}.example.com`, audiences: ['a'] } }));
    },
    want: [],
  },
  // issuer.url
  {
    name: 'issuer url missing',
    edit: (d) => {
      delete d.jwt[0].issuer.url;
    },
    want: [['FieldValueRequired', `${jwt0}.issuer.url`]],
  },
  {
    name: 'issuer url http',
    edit: (d) => {
      d.jwt[0].issuer.url = 'http://issuer.example.com';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.url`]],
  },
  {
    name: 'issuer url with a path',
    edit: (d) => {
      d.jwt[0].issuer.url = 'https://issuer.example.com/tenant/a';
    },
    want: [],
  },
  {
    name: 'issuer url with user info',
    edit: (d) => {
      d.jwt[0].issuer.url = 'https://me:pw@issuer.example.com';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.url`]],
  },
  {
    name: 'issuer url with a query',
    edit: (d) => {
      d.jwt[0].issuer.url = 'https://issuer.example.com?a=b';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.url`]],
  },
  {
    name: 'issuer url with a fragment',
    edit: (d) => {
      d.jwt[0].issuer.url = 'https://issuer.example.com#x';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.url`]],
  },
  {
    name: 'issuer url not a URL',
    edit: (d) => {
      d.jwt[0].issuer.url = 'not a url';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.url`]],
  },
  { name: 'two authenticators, distinct issuers', edit: (d) => second(d), want: [] },
  {
    name: 'two authenticators, same issuer',
    edit: (d) =>
      second(d, (a) => {
        a.issuer.url = d.jwt[0].issuer.url;
      }),
    want: [['FieldValueDuplicate', 'jwt[1].issuer.url']],
  },
  // issuer.discoveryURL
  {
    name: 'discovery url set',
    edit: (d) => {
      d.jwt[0].issuer.discoveryURL = 'https://discovery.example.com/.well-known/openid-configuration';
    },
    want: [],
  },
  {
    name: 'discovery url equal to url (trailing slash aside)',
    edit: (d) => {
      d.jwt[0].issuer.discoveryURL = 'https://issuer.example.com/';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.discoveryURL`]],
  },
  {
    name: 'discovery url http',
    edit: (d) => {
      d.jwt[0].issuer.discoveryURL = 'http://discovery.example.com';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.discoveryURL`]],
  },
  {
    name: 'two authenticators, same discovery url',
    edit: (d) => {
      d.jwt[0].issuer.discoveryURL = 'https://d.example.com/x';
      second(d);
    },
    want: [['FieldValueDuplicate', 'jwt[1].issuer.discoveryURL']],
  },
  {
    name: 'two authenticators, distinct discovery urls',
    edit: (d) => {
      d.jwt[0].issuer.discoveryURL = 'https://d.example.com/x';
      second(d, (a) => {
        a.issuer.discoveryURL = 'https://d.example.com/y';
      });
    },
    want: [],
  },
  // audiences
  {
    name: 'audiences missing',
    edit: (d) => {
      delete d.jwt[0].issuer.audiences;
    },
    want: [['FieldValueRequired', `${jwt0}.issuer.audiences`]],
  },
  {
    name: 'audiences empty',
    edit: (d) => {
      d.jwt[0].issuer.audiences = [];
    },
    want: [['FieldValueRequired', `${jwt0}.issuer.audiences`]],
  },
  {
    name: 'an empty audience',
    edit: (d) => {
      d.jwt[0].issuer.audiences = [''];
    },
    want: [['FieldValueRequired', `${jwt0}.issuer.audiences[0]`]],
  },
  {
    name: 'a repeated audience',
    edit: (d) => {
      d.jwt[0].issuer.audiences = ['a', 'a'];
      d.jwt[0].issuer.audienceMatchPolicy = 'MatchAny';
    },
    want: [['FieldValueDuplicate', `${jwt0}.issuer.audiences[1]`]],
  },
  {
    name: 'two audiences with MatchAny',
    edit: (d) => {
      d.jwt[0].issuer.audiences = ['a', 'b'];
      d.jwt[0].issuer.audienceMatchPolicy = 'MatchAny';
    },
    want: [],
  },
  {
    name: 'two audiences without a policy',
    edit: (d) => {
      d.jwt[0].issuer.audiences = ['a', 'b'];
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.audienceMatchPolicy`]],
  },
  {
    name: 'one audience with MatchAny',
    edit: (d) => {
      d.jwt[0].issuer.audienceMatchPolicy = 'MatchAny';
    },
    want: [],
  },
  {
    name: 'one audience with another policy',
    edit: (d) => {
      d.jwt[0].issuer.audienceMatchPolicy = 'MatchAll';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.audienceMatchPolicy`]],
  },
  // certificateAuthority
  {
    name: 'certificate authority not PEM',
    edit: (d) => {
      d.jwt[0].issuer.certificateAuthority = 'hello';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.certificateAuthority`]],
  },
  {
    name: 'certificate authority with a broken certificate',
    edit: (d) => {
      d.jwt[0].issuer.certificateAuthority = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.certificateAuthority`]],
  },
  // egressSelectorType (v1)
  {
    name: 'egress selector controlplane',
    edit: (d) => {
      d.jwt[0].issuer.egressSelectorType = 'controlplane';
    },
    want: [],
  },
  {
    name: 'egress selector cluster',
    edit: (d) => {
      d.jwt[0].issuer.egressSelectorType = 'cluster';
    },
    want: [],
  },
  {
    name: 'egress selector etcd',
    edit: (d) => {
      d.jwt[0].issuer.egressSelectorType = 'etcd';
    },
    want: [['FieldValueInvalid', `${jwt0}.issuer.egressSelectorType`]],
  },
  // claimValidationRules
  {
    name: 'claim rule with claim and value',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ claim: 'hd', requiredValue: 'example.com' }];
    },
    want: [],
  },
  {
    name: 'claim rule with expression and message',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ expression: 'claims.hd == "x"', message: 'wrong hd' }];
    },
    want: [],
  },
  {
    name: 'claim rule with neither',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{}];
    },
    want: [['FieldValueRequired', `${jwt0}.claimValidationRules[0]`]],
  },
  {
    name: 'claim rule with both',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ claim: 'a', expression: 'true' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimValidationRules[0]`]],
  },
  {
    name: 'claim rule with claim and message',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ claim: 'a', message: 'm' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimValidationRules[0].message`]],
  },
  {
    name: 'claim rule with expression and requiredValue',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ expression: 'true', requiredValue: 'v' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimValidationRules[0].requiredValue`]],
  },
  {
    name: 'claim rules repeating a claim',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ claim: 'a' }, { claim: 'a', requiredValue: 'x' }];
    },
    want: [['FieldValueDuplicate', `${jwt0}.claimValidationRules[1].claim`]],
  },
  {
    name: 'claim rules repeating an expression',
    edit: (d) => {
      d.jwt[0].claimValidationRules = [{ expression: 'true' }, { expression: 'true' }];
    },
    want: [['FieldValueDuplicate', `${jwt0}.claimValidationRules[1].expression`]],
  },
  // claimMappings.username
  {
    name: 'username missing',
    edit: (d) => {
      delete d.jwt[0].claimMappings.username;
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.username`]],
  },
  {
    name: 'claimMappings missing',
    edit: (d) => {
      delete d.jwt[0].claimMappings;
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.username`]],
  },
  {
    name: 'username claim without prefix',
    edit: (d) => {
      delete d.jwt[0].claimMappings.username.prefix;
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.username.prefix`]],
  },
  {
    name: 'username claim with a prefix',
    edit: (d) => {
      d.jwt[0].claimMappings.username.prefix = 'oidc:';
    },
    want: [],
  },
  {
    name: 'username expression',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.sub' };
    },
    want: [],
  },
  {
    name: 'username claim and expression',
    edit: (d) => {
      d.jwt[0].claimMappings.username.expression = 'claims.sub';
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.username`]],
  },
  {
    name: 'username expression with a prefix',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.sub', prefix: '' };
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.username.prefix`]],
  },
  // the email rule
  {
    name: 'username from claims.email alone',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.email' };
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.username.expression`]],
  },
  {
    name: 'username from claims.email, verified in the expression',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.email_verified ? claims.email : ""' };
    },
    want: [],
  },
  {
    name: 'username from claims.email, verified by a claim rule',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.email' };
      d.jwt[0].claimValidationRules = [{ expression: 'claims.?email_verified.orValue(true) == true' }];
    },
    want: [],
  },
  {
    name: 'username from claims.email, verified in an extra mapping',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.email' };
      d.jwt[0].claimMappings.extra = [{ key: 'example.com/verified', valueExpression: 'string(claims.email_verified)' }];
    },
    want: [],
  },
  {
    name: 'username from claims.email, a claim rule on email_verified by name does not count',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.email' };
      d.jwt[0].claimValidationRules = [{ claim: 'email_verified', requiredValue: 'true' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.username.expression`]],
  },
  {
    name: 'username from claims.emails (another claim)',
    edit: (d) => {
      d.jwt[0].claimMappings.username = { expression: 'claims.emails[0]' };
    },
    want: [],
  },
  // groups
  {
    name: 'groups claim with prefix',
    edit: (d) => {
      d.jwt[0].claimMappings.groups = { claim: 'groups', prefix: '' };
    },
    want: [],
  },
  {
    name: 'groups claim without prefix',
    edit: (d) => {
      d.jwt[0].claimMappings.groups = { claim: 'groups' };
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.groups.prefix`]],
  },
  {
    name: 'groups expression with prefix',
    edit: (d) => {
      d.jwt[0].claimMappings.groups = { expression: 'claims.groups', prefix: 'x' };
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.groups.prefix`]],
  },
  {
    name: 'groups claim and expression',
    edit: (d) => {
      d.jwt[0].claimMappings.groups = { claim: 'g', prefix: '', expression: 'claims.g' };
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.groups`]],
  },
  {
    name: 'groups empty (no mapping)',
    edit: (d) => {
      d.jwt[0].claimMappings.groups = {};
    },
    want: [],
  },
  // uid
  {
    name: 'uid claim',
    edit: (d) => {
      d.jwt[0].claimMappings.uid = { claim: 'sub' };
    },
    want: [],
  },
  {
    name: 'uid expression',
    edit: (d) => {
      d.jwt[0].claimMappings.uid = { expression: 'claims.sub' };
    },
    want: [],
  },
  {
    name: 'uid claim and expression',
    edit: (d) => {
      d.jwt[0].claimMappings.uid = { claim: 'sub', expression: 'claims.sub' };
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.uid`]],
  },
  // extra
  {
    name: 'extra mapping',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'example.com/tenant', valueExpression: 'claims.tid' }];
    },
    want: [],
  },
  {
    name: 'extra key missing',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ valueExpression: 'claims.tid' }];
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key without a domain',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'tenant', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key with a bad domain',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'exa_mple.com/t', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key with a bad path',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'example.com/a b', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key upper case path',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'example.com/Tenant', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key under orch.io',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'authentication.orch.io/x', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key under kubernetes.io',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'kubernetes.io/x', valueExpression: 'x' }];
    },
    want: [['FieldValueInvalid', `${jwt0}.claimMappings.extra[0].key`]],
  },
  {
    name: 'extra key repeated',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [
        { key: 'example.com/t', valueExpression: 'x' },
        { key: 'example.com/t', valueExpression: 'y' },
      ];
    },
    want: [['FieldValueDuplicate', `${jwt0}.claimMappings.extra[1].key`]],
  },
  {
    name: 'extra valueExpression missing',
    edit: (d) => {
      d.jwt[0].claimMappings.extra = [{ key: 'example.com/t' }];
    },
    want: [['FieldValueRequired', `${jwt0}.claimMappings.extra[0].valueExpression`]],
  },
  // userValidationRules
  {
    name: 'user rule',
    edit: (d) => {
      d.jwt[0].userValidationRules = [{ expression: "!user.username.startsWith('system:')", message: 'no system users' }];
    },
    want: [],
  },
  {
    name: 'user rule without expression',
    edit: (d) => {
      d.jwt[0].userValidationRules = [{ message: 'm' }];
    },
    want: [['FieldValueRequired', `${jwt0}.userValidationRules[0].expression`]],
  },
  {
    name: 'user rules repeating an expression',
    edit: (d) => {
      d.jwt[0].userValidationRules = [{ expression: 'true' }, { expression: 'true' }];
    },
    want: [['FieldValueDuplicate', `${jwt0}.userValidationRules[1].expression`]],
  },
  // anonymous
  {
    name: 'anonymous enabled with conditions',
    edit: (d) => {
      d.anonymous = { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] };
    },
    want: [],
  },
  {
    name: 'anonymous disabled',
    edit: (d) => {
      d.anonymous = { enabled: false };
    },
    want: [],
  },
  {
    name: 'anonymous disabled with conditions',
    edit: (d) => {
      d.anonymous = { enabled: false, conditions: [{ path: '/livez' }] };
    },
    want: [['FieldValueInvalid', 'anonymous.conditions']],
  },
  {
    name: 'anonymous condition without path',
    edit: (d) => {
      d.anonymous = { enabled: true, conditions: [{}] };
    },
    want: [['FieldValueRequired', 'anonymous.conditions[0].path']],
  },
];

describe('AuthenticationConfiguration validation', () => {
  it.each(rows)('$name', ({ edit, want }) => {
    const doc = base();
    edit(doc);
    const got = check(authenticationDocument, doc);
    expect(got.errors).toEqual(want);
    expect(got.result.ok).toBe(want.length === 0);
  });

  it('accepts a real CA certificate', () => {
    const { certPem } = makeCertificate(tempDir());
    const doc = base();
    doc.jwt[0].issuer.certificateAuthority = certPem;
    expect(check(authenticationDocument, doc).errors).toEqual([]);
  });

  it('says what is wrong in the words Kubernetes uses', () => {
    const doc = base();
    delete doc.jwt[0].claimMappings.username.prefix;
    doc.jwt[0].issuer.url = 'http://x.example.com';
    expect(check(authenticationDocument, doc).messages).toEqual([
      'jwt[0].issuer.url: Invalid value: "http://x.example.com": URL scheme must be https',
      'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
    ]);
  });

  it('reads both versions to the same internal form, with v1-only fields refused in v1beta1', () => {
    const doc = base();
    doc.jwt[0].claimMappings.groups = { claim: 'groups', prefix: 'oidc:' };
    doc.anonymous = { enabled: true, conditions: [{ path: '/healthz' }] };
    const v1 = check(authenticationDocument, doc);
    const beta = check(authenticationDocument, { ...clone(doc), apiVersion: V1BETA1 });
    expect(v1.value).toEqual(beta.value);
    expect(v1.value).toEqual({
      jwt: [
        {
          issuer: { url: 'https://issuer.example.com', audiences: ['orchd'] },
          claimValidationRules: [],
          claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: 'oidc:' }, extra: [] },
          userValidationRules: [],
        },
      ],
      anonymous: { enabled: true, conditions: [{ path: '/healthz' }] },
    });
    const withEgress = clone(doc);
    withEgress.jwt[0].issuer.egressSelectorType = 'controlplane';
    expect(check(authenticationDocument, withEgress).value?.jwt[0].issuer.egressSelectorType).toBe('controlplane');
    expect(check(authenticationDocument, { ...withEgress, apiVersion: V1BETA1 }).errors).toEqual([['FieldValueForbidden', 'jwt[0].issuer.egressSelectorType']]);
  });
});
