import { describe, expect, it } from 'vitest';
import { authorizationDocument } from '../../src/config/authorization.js';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { check, clone, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';

type Doc = any;

const dir = tempDir();
const connFile = writeFile(dir, 'webhook.kubeconfig', 'apiVersion: v1\nkind: Config\n');

const webhook = (): Doc => ({
  timeout: '3s',
  authorizedTTL: '5m',
  unauthorizedTTL: '30s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', clusterConfigFile: connFile },
  matchConditions: [{ expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'" }],
});
const base = (): Doc => ({
  apiVersion: V1,
  kind: 'AuthorizationConfiguration',
  authorizers: [
    { type: 'Webhook', name: 'webhook', webhook: webhook() },
    { type: 'RBAC', name: 'rbac' },
  ],
});

interface Row {
  name: string;
  edit: (d: Doc) => void;
  want: [string, string][];
}
const w = 'authorizers[0].webhook';

const rows: Row[] = [
  { name: 'the base document', edit: () => {}, want: [] },
  {
    name: 'no authorizers',
    edit: (d) => {
      d.authorizers = [];
    },
    want: [['FieldValueRequired', 'authorizers']],
  },
  {
    name: 'authorizers missing',
    edit: (d) => {
      delete d.authorizers;
    },
    want: [['FieldValueRequired', 'authorizers']],
  },
  // type
  {
    name: 'type missing',
    edit: (d) => {
      delete d.authorizers[1].type;
    },
    want: [['FieldValueRequired', 'authorizers[1].type']],
  },
  {
    name: 'unknown type',
    edit: (d) => {
      d.authorizers[1].type = 'ABAC';
    },
    want: [['FieldValueNotSupported', 'authorizers[1].type']],
  },
  {
    name: 'AlwaysAllow and AlwaysDeny',
    edit: (d) => {
      d.authorizers.push({ type: 'AlwaysAllow', name: 'allow' }, { type: 'AlwaysDeny', name: 'deny' });
    },
    want: [],
  },
  {
    name: 'RBAC twice',
    edit: (d) => {
      d.authorizers.push({ type: 'RBAC', name: 'rbac2' });
    },
    want: [['FieldValueDuplicate', 'authorizers[2].type']],
  },
  {
    name: 'two webhooks',
    edit: (d) => {
      d.authorizers.push({ type: 'Webhook', name: 'second', webhook: webhook() });
    },
    want: [],
  },
  // name
  {
    name: 'name missing',
    edit: (d) => {
      delete d.authorizers[1].name;
    },
    want: [['FieldValueRequired', 'authorizers[1].name']],
  },
  {
    name: 'name repeated',
    edit: (d) => {
      d.authorizers[1].name = 'webhook';
    },
    want: [['FieldValueDuplicate', 'authorizers[1].name']],
  },
  {
    name: 'name not a DNS-1123 label (dots)',
    edit: (d) => {
      d.authorizers[1].name = 'rbac.example';
    },
    want: [['FieldValueInvalid', 'authorizers[1].name']],
  },
  {
    name: 'name not a DNS-1123 label (capitals)',
    edit: (d) => {
      d.authorizers[1].name = 'RBAC';
    },
    want: [['FieldValueInvalid', 'authorizers[1].name']],
  },
  // webhook presence
  {
    name: 'webhook missing for Webhook',
    edit: (d) => {
      delete d.authorizers[0].webhook;
    },
    want: [['FieldValueRequired', 'authorizers[0].webhook']],
  },
  {
    name: 'webhook given for RBAC',
    edit: (d) => {
      d.authorizers[1].webhook = webhook();
    },
    want: [['FieldValueInvalid', 'authorizers[1].webhook']],
  },
  // timeout
  {
    name: 'timeout missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.timeout;
    },
    want: [['FieldValueRequired', `${w}.timeout`]],
  },
  {
    name: 'timeout zero',
    edit: (d) => {
      d.authorizers[0].webhook.timeout = '0s';
    },
    want: [['FieldValueRequired', `${w}.timeout`]],
  },
  {
    name: 'timeout 30s',
    edit: (d) => {
      d.authorizers[0].webhook.timeout = '30s';
    },
    want: [],
  },
  {
    name: 'timeout 31s',
    edit: (d) => {
      d.authorizers[0].webhook.timeout = '31s';
    },
    want: [['FieldValueInvalid', `${w}.timeout`]],
  },
  {
    name: 'timeout negative',
    edit: (d) => {
      d.authorizers[0].webhook.timeout = '-1s';
    },
    want: [['FieldValueInvalid', `${w}.timeout`]],
  },
  {
    name: 'timeout not a duration',
    edit: (d) => {
      d.authorizers[0].webhook.timeout = '3 seconds';
    },
    want: [['FieldValueInvalid', `${w}.timeout`]],
  },
  // TTLs
  {
    name: 'authorizedTTL missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.authorizedTTL;
    },
    want: [['FieldValueRequired', `${w}.authorizedTTL`]],
  },
  {
    name: 'authorizedTTL negative',
    edit: (d) => {
      d.authorizers[0].webhook.authorizedTTL = '-5m';
    },
    want: [['FieldValueInvalid', `${w}.authorizedTTL`]],
  },
  {
    name: 'unauthorizedTTL missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.unauthorizedTTL;
    },
    want: [['FieldValueRequired', `${w}.unauthorizedTTL`]],
  },
  {
    name: 'unauthorizedTTL zero',
    edit: (d) => {
      d.authorizers[0].webhook.unauthorizedTTL = '0';
    },
    want: [['FieldValueRequired', `${w}.unauthorizedTTL`]],
  },
  {
    name: 'unauthorizedTTL 1h30m',
    edit: (d) => {
      d.authorizers[0].webhook.unauthorizedTTL = '1h30m';
    },
    want: [],
  },
  // versions
  {
    name: 'subjectAccessReviewVersion missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.subjectAccessReviewVersion;
    },
    want: [['FieldValueRequired', `${w}.subjectAccessReviewVersion`]],
  },
  {
    name: 'subjectAccessReviewVersion v1beta1',
    edit: (d) => {
      d.authorizers[0].webhook.subjectAccessReviewVersion = 'v1beta1';
    },
    want: [],
  },
  {
    name: 'subjectAccessReviewVersion v2',
    edit: (d) => {
      d.authorizers[0].webhook.subjectAccessReviewVersion = 'v2';
    },
    want: [['FieldValueNotSupported', `${w}.subjectAccessReviewVersion`]],
  },
  {
    name: 'matchConditionSubjectAccessReviewVersion missing with conditions',
    edit: (d) => {
      delete d.authorizers[0].webhook.matchConditionSubjectAccessReviewVersion;
    },
    want: [['FieldValueRequired', `${w}.matchConditionSubjectAccessReviewVersion`]],
  },
  {
    name: 'matchConditionSubjectAccessReviewVersion missing without conditions',
    edit: (d) => {
      delete d.authorizers[0].webhook.matchConditionSubjectAccessReviewVersion;
      d.authorizers[0].webhook.matchConditions = [];
    },
    want: [],
  },
  {
    name: 'matchConditionSubjectAccessReviewVersion v1beta1',
    edit: (d) => {
      d.authorizers[0].webhook.matchConditionSubjectAccessReviewVersion = 'v1beta1';
    },
    want: [['FieldValueNotSupported', `${w}.matchConditionSubjectAccessReviewVersion`]],
  },
  // failurePolicy
  {
    name: 'failurePolicy missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.failurePolicy;
    },
    want: [['FieldValueRequired', `${w}.failurePolicy`]],
  },
  {
    name: 'failurePolicy Deny',
    edit: (d) => {
      d.authorizers[0].webhook.failurePolicy = 'Deny';
    },
    want: [],
  },
  {
    name: 'failurePolicy Fail',
    edit: (d) => {
      d.authorizers[0].webhook.failurePolicy = 'Fail';
    },
    want: [['FieldValueNotSupported', `${w}.failurePolicy`]],
  },
  // connectionInfo
  {
    name: 'connectionInfo missing',
    edit: (d) => {
      delete d.authorizers[0].webhook.connectionInfo;
    },
    want: [['FieldValueRequired', `${w}.connectionInfo.type`]],
  },
  {
    name: 'connectionInfo type unknown',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo = { type: 'URL' };
    },
    want: [['FieldValueNotSupported', `${w}.connectionInfo.type`]],
  },
  {
    name: 'InClusterConfig',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo = { type: 'InClusterConfig' };
    },
    want: [],
  },
  {
    name: 'InClusterConfig with a file',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo = { type: 'InClusterConfig', clusterConfigFile: connFile };
    },
    want: [['FieldValueInvalid', `${w}.connectionInfo.clusterConfigFile`]],
  },
  {
    name: 'KubeConfigFile without a file',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo = { type: 'KubeConfigFile' };
    },
    want: [['FieldValueRequired', `${w}.connectionInfo.clusterConfigFile`]],
  },
  {
    name: 'KubeConfigFile relative path',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo.clusterConfigFile = 'webhook.kubeconfig';
    },
    want: [['FieldValueInvalid', `${w}.connectionInfo.clusterConfigFile`]],
  },
  {
    name: 'KubeConfigFile missing file',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo.clusterConfigFile = `${dir}/nope`;
    },
    want: [['FieldValueInvalid', `${w}.connectionInfo.clusterConfigFile`]],
  },
  {
    name: 'KubeConfigFile a folder',
    edit: (d) => {
      d.authorizers[0].webhook.connectionInfo.clusterConfigFile = dir;
    },
    want: [['FieldValueInvalid', `${w}.connectionInfo.clusterConfigFile`]],
  },
  // matchConditions
  {
    name: '64 match conditions',
    edit: (d) => {
      d.authorizers[0].webhook.matchConditions = Array.from({ length: 64 }, (_, i) => ({ expression: `request.user == 'u${i}'` }));
    },
    want: [],
  },
  {
    name: '65 match conditions',
    edit: (d) => {
      d.authorizers[0].webhook.matchConditions = Array.from({ length: 65 }, (_, i) => ({ expression: `request.user == 'u${i}'` }));
    },
    want: [['FieldValueTooMany', `${w}.matchConditions`]],
  },
  {
    name: 'match condition blank',
    edit: (d) => {
      d.authorizers[0].webhook.matchConditions = [{ expression: '  ' }];
    },
    want: [['FieldValueRequired', `${w}.matchConditions[0].expression`]],
  },
  {
    name: 'match condition repeated',
    edit: (d) => {
      d.authorizers[0].webhook.matchConditions = [{ expression: 'true' }, { expression: 'true' }];
    },
    want: [['FieldValueDuplicate', `${w}.matchConditions[1].expression`]],
  },
];

describe('AuthorizationConfiguration validation', () => {
  it.each(rows)('$name', ({ edit, want }) => {
    const doc = base();
    edit(doc);
    const got = check(authorizationDocument, doc);
    expect(got.errors).toEqual(want);
    expect(got.result.ok).toBe(want.length === 0);
  });

  it('words the timeout limit as Kubernetes does', () => {
    const doc = base();
    doc.authorizers[0].webhook.timeout = '45s';
    expect(check(authorizationDocument, doc).messages).toEqual(['authorizers[0].webhook.timeout: Invalid value: "45s": must be > 0s and <= 30s']);
  });

  it('reads both versions to the same internal form; the cache switches exist only in v1 and default to on', () => {
    const beta = check(authorizationDocument, { ...base(), apiVersion: V1BETA1 });
    const v1 = check(authorizationDocument, base());
    expect(beta.value).toEqual(v1.value);
    expect(v1.value?.authorizers[0]).toEqual({
      type: 'Webhook',
      name: 'webhook',
      webhook: {
        authorizedTTLMs: 300_000,
        cacheAuthorizedRequests: true,
        unauthorizedTTLMs: 30_000,
        cacheUnauthorizedRequests: true,
        timeoutMs: 3000,
        subjectAccessReviewVersion: 'v1',
        matchConditionSubjectAccessReviewVersion: 'v1',
        failurePolicy: 'NoOpinion',
        connectionInfo: { type: 'KubeConfigFile', clusterConfigFile: connFile },
        matchConditions: webhook().matchConditions,
      },
    });
    const off = base();
    off.authorizers[0].webhook.cacheAuthorizedRequests = false;
    off.authorizers[0].webhook.cacheUnauthorizedRequests = false;
    const got = check(authorizationDocument, off).value?.authorizers[0].webhook;
    expect([got?.cacheAuthorizedRequests, got?.cacheUnauthorizedRequests]).toEqual([false, false]);
    expect(check(authorizationDocument, { ...clone(off), apiVersion: V1BETA1 }).errors).toEqual([
      ['FieldValueForbidden', `${w}.cacheAuthorizedRequests`],
      ['FieldValueForbidden', `${w}.cacheUnauthorizedRequests`],
    ]);
  });
});
