import { describe, expect, it } from 'vitest';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { encryptionDocument } from '../../src/config/encryption.js';
import { check } from './support.js';

type Doc = any;

const key = (bytes: number, fill = 7) => Buffer.alloc(bytes, fill).toString('base64');
const kms = (extra: Doc = {}): Doc => ({ kms: { apiVersion: 'v2', name: 'vault', endpoint: 'unix:///run/kms.sock', ...extra } });
const base = (): Doc => ({
  apiVersion: V1,
  kind: 'EncryptionConfiguration',
  resources: [
    {
      resources: ['secrets'],
      providers: [
        {
          aesgcm: {
            keys: [
              { name: 'k2', secret: key(32) },
              { name: 'k1', secret: key(16, 1) },
            ],
          },
        },
        { identity: {} },
      ],
    },
  ],
});
const entry = (resources: string[], providers: Doc[] = [{ identity: {} }]): Doc => ({ resources, providers });

interface Row {
  name: string;
  edit: (d: Doc) => void;
  want: [string, string][];
}
const p0 = 'resources[0].providers[0]';

const rows: Row[] = [
  { name: 'the base document', edit: () => {}, want: [] },
  {
    name: 'resources missing',
    edit: (d) => {
      delete d.resources;
    },
    want: [['FieldValueRequired', 'resources']],
  },
  {
    name: 'an entry without resources',
    edit: (d) => {
      d.resources[0].resources = [];
    },
    want: [['FieldValueRequired', 'resources[0].resources']],
  },
  {
    name: 'an entry without providers',
    edit: (d) => {
      d.resources[0].providers = [];
    },
    want: [['FieldValueRequired', 'resources[0].providers']],
  },
  // providers
  {
    name: 'an empty provider',
    edit: (d) => {
      d.resources[0].providers = [{}];
    },
    want: [['FieldValueInvalid', p0]],
  },
  {
    name: 'two providers in one item',
    edit: (d) => {
      d.resources[0].providers = [{ identity: {}, secretbox: { keys: [{ name: 'a', secret: key(32) }] } }];
    },
    want: [['FieldValueInvalid', p0]],
  },
  // key lengths
  {
    name: 'aesgcm 16/24/32-byte keys',
    edit: (d) => {
      d.resources[0].providers[0].aesgcm.keys = [16, 24, 32].map((n) => ({ name: `k${n}`, secret: key(n) }));
    },
    want: [],
  },
  {
    name: 'aesgcm 20-byte key',
    edit: (d) => {
      d.resources[0].providers[0].aesgcm.keys[1].secret = key(20);
    },
    want: [['FieldValueInvalid', `${p0}.aesgcm.keys[1].secret`]],
  },
  {
    name: 'aescbc 32-byte key',
    edit: (d) => {
      d.resources[0].providers[0] = { aescbc: { keys: [{ name: 'a', secret: key(32) }] } };
    },
    want: [],
  },
  {
    name: 'aescbc 16-byte key (the spec: 32 bytes)',
    edit: (d) => {
      d.resources[0].providers[0] = { aescbc: { keys: [{ name: 'a', secret: key(16) }] } };
    },
    want: [['FieldValueInvalid', `${p0}.aescbc.keys[0].secret`]],
  },
  {
    name: 'secretbox 32-byte key',
    edit: (d) => {
      d.resources[0].providers[0] = { secretbox: { keys: [{ name: 'a', secret: key(32) }] } };
    },
    want: [],
  },
  {
    name: 'secretbox 24-byte key',
    edit: (d) => {
      d.resources[0].providers[0] = { secretbox: { keys: [{ name: 'a', secret: key(24) }] } };
    },
    want: [['FieldValueInvalid', `${p0}.secretbox.keys[0].secret`]],
  },
  {
    name: 'no keys',
    edit: (d) => {
      d.resources[0].providers[0].aesgcm.keys = [];
    },
    want: [['FieldValueRequired', `${p0}.aesgcm.keys`]],
  },
  {
    name: 'key without name',
    edit: (d) => {
      delete d.resources[0].providers[0].aesgcm.keys[0].name;
    },
    want: [['FieldValueRequired', `${p0}.aesgcm.keys[0].name`]],
  },
  {
    name: 'key without secret',
    edit: (d) => {
      delete d.resources[0].providers[0].aesgcm.keys[0].secret;
    },
    want: [['FieldValueRequired', `${p0}.aesgcm.keys[0].secret`]],
  },
  {
    name: 'secret not base64',
    edit: (d) => {
      d.resources[0].providers[0].aesgcm.keys[0].secret = 'not*base64';
    },
    want: [['FieldValueInvalid', `${p0}.aesgcm.keys[0].secret`]],
  },
  {
    name: 'secret base64 without padding',
    edit: (d) => {
      d.resources[0].providers[0].aesgcm.keys[0].secret = key(16).replace(/=+$/, '');
    },
    want: [['FieldValueInvalid', `${p0}.aesgcm.keys[0].secret`]],
  },
  // kms
  {
    name: 'kms v2',
    edit: (d) => {
      d.resources[0].providers = [kms(), { identity: {} }];
    },
    want: [],
  },
  {
    name: 'kms v2 with a timeout',
    edit: (d) => {
      d.resources[0].providers = [kms({ timeout: '10s' })];
    },
    want: [],
  },
  {
    name: 'kms without apiVersion (v1, refused)',
    edit: (d) => {
      d.resources[0].providers = [kms({ apiVersion: undefined })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.apiVersion`]],
  },
  {
    name: 'kms v3',
    edit: (d) => {
      d.resources[0].providers = [kms({ apiVersion: 'v3' })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.apiVersion`]],
  },
  {
    name: 'kms without name',
    edit: (d) => {
      d.resources[0].providers = [kms({ name: undefined })];
    },
    want: [['FieldValueRequired', `${p0}.kms.name`]],
  },
  {
    name: 'kms v2 name with a colon',
    edit: (d) => {
      d.resources[0].providers = [kms({ name: 'a:b' })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.name`]],
  },
  {
    name: 'kms names repeated',
    edit: (d) => {
      d.resources[0].providers = [kms(), kms({ endpoint: 'unix:///run/other.sock' })];
    },
    want: [['FieldValueInvalid', 'resources[0].providers[1].kms.name']],
  },
  {
    name: 'kms names repeated across entries',
    edit: (d) => {
      d.resources[0].providers = [kms()];
      d.resources.push(entry(['configmaps'], [kms()]));
    },
    want: [['FieldValueInvalid', 'resources[1].providers[0].kms.name']],
  },
  {
    name: 'kms without endpoint',
    edit: (d) => {
      d.resources[0].providers = [kms({ endpoint: undefined })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.endpoint`]],
  },
  {
    name: 'kms tcp endpoint',
    edit: (d) => {
      d.resources[0].providers = [kms({ endpoint: 'tcp://127.0.0.1:9000' })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.endpoint`]],
  },
  {
    name: 'kms zero timeout',
    edit: (d) => {
      d.resources[0].providers = [kms({ timeout: '0s' })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.timeout`]],
  },
  {
    name: 'kms v2 with cachesize',
    edit: (d) => {
      d.resources[0].providers = [kms({ cachesize: 10 })];
    },
    want: [['FieldValueInvalid', `${p0}.kms.cachesize`]],
  },
  // resource names
  {
    name: 'a group resource',
    edit: (d) => {
      d.resources[0].resources = ['deployments.apps'];
    },
    want: [],
  },
  {
    name: 'capital letters',
    edit: (d) => {
      d.resources[0].resources = ['Secrets'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources[0]']],
  },
  {
    name: 'a bare star',
    edit: (d) => {
      d.resources[0].resources = ['*'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources[0]']],
  },
  {
    name: 'a resource in every group',
    edit: (d) => {
      d.resources[0].resources = ['secrets.*'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources[0]']],
  },
  // wildcards inside one list
  {
    name: '*.* alone',
    edit: (d) => {
      d.resources[0].resources = ['*.*'];
    },
    want: [],
  },
  {
    name: '*. (core) and *.apps',
    edit: (d) => {
      d.resources[0].resources = ['*.', '*.apps'];
    },
    want: [],
  },
  {
    name: 'a name twice',
    edit: (d) => {
      d.resources[0].resources = ['secrets', 'secrets'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources']],
  },
  {
    name: 'secrets with *.',
    edit: (d) => {
      d.resources[0].resources = ['secrets', '*.'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources']],
  },
  {
    name: 'deployments.apps with *.apps',
    edit: (d) => {
      d.resources[0].resources = ['*.apps', 'deployments.apps'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources']],
  },
  {
    name: 'anything with *.*',
    edit: (d) => {
      d.resources[0].resources = ['configmaps', '*.*'];
    },
    want: [['FieldValueInvalid', 'resources[0].resources']],
  },
  // wildcards across lists
  {
    name: 'secrets first, then *.* with identity',
    edit: (d) => {
      d.resources.push(entry(['*.*']));
    },
    want: [],
  },
  {
    name: 'secrets first, then *.',
    edit: (d) => {
      d.resources.push(entry(['*.']));
    },
    want: [],
  },
  {
    name: '*.* first, then secrets (masked)',
    edit: (d) => {
      d.resources.unshift(entry(['*.*']));
    },
    want: [['FieldValueInvalid', 'resources[1].resources[0]']],
  },
  {
    name: '*. first, then secrets (masked)',
    edit: (d) => {
      d.resources.unshift(entry(['*.']));
    },
    want: [['FieldValueInvalid', 'resources[1].resources[0]']],
  },
  {
    name: '*.apps first, then deployments.apps (masked)',
    edit: (d) => {
      d.resources = [entry(['*.apps']), entry(['deployments.apps'])];
    },
    want: [['FieldValueInvalid', 'resources[1].resources[0]']],
  },
  {
    name: '*.apps first, then secrets (another group)',
    edit: (d) => {
      d.resources.unshift(entry(['*.apps']));
    },
    want: [],
  },
  {
    name: '*.apps first, then *.*',
    edit: (d) => {
      d.resources = [entry(['*.apps']), entry(['*.*'])];
    },
    want: [],
  },
];

describe('EncryptionConfiguration validation', () => {
  it.each(rows)('$name', ({ edit, want }) => {
    const doc = base();
    edit(doc);
    const got = check(encryptionDocument, doc);
    expect(got.errors).toEqual(want);
    expect(got.result.ok).toBe(want.length === 0);
  });

  it('never prints a key, and says which rule masks a resource', () => {
    const doc = base();
    doc.resources[0].providers[0].aesgcm.keys[0].secret = key(20);
    doc.resources.unshift(entry(['*.*']));
    expect(check(encryptionDocument, doc).messages).toEqual([
      'resources[1].resources[0]: Invalid value: "secrets": resource "secrets" is masked by earlier rule "*.*"',
      'resources[1].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 20, expected one of [16 24 32]',
    ]);
  });

  it('reads the internal form with decoded keys, parsed resources and KMS defaults', () => {
    const doc = base();
    doc.resources.push(entry(['*.apps', '*.'], [kms()]));
    const got = check(encryptionDocument, doc).value!;
    expect(got.resources[0].providers[0]).toEqual({
      type: 'aesgcm',
      keys: [
        { name: 'k2', secret: Buffer.alloc(32, 7) },
        { name: 'k1', secret: Buffer.alloc(16, 1) },
      ],
    });
    expect(got.resources[0].providers[1]).toEqual({ type: 'identity' });
    expect(got.resources[1]).toEqual({
      resources: [
        { group: 'apps', resource: '*' },
        { group: '', resource: '*' },
      ],
      providers: [{ type: 'kms', name: 'vault', apiVersion: 'v2', endpoint: 'unix:///run/kms.sock', timeoutMs: 3000 }],
    });
  });

  it('exists only in apiserver.config.orch.io/v1', () => {
    expect(check(encryptionDocument, { ...base(), apiVersion: V1BETA1 }).messages).toEqual([
      'apiVersion: Unsupported value: "apiserver.orch.io/v1beta1": supported values: "apiserver.config.orch.io/v1"',
    ]);
  });
});
