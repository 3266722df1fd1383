/**
 * Secret (core v1): data as base64 bytes, and stringData, a write-only convenience merged into data
 * on every write (its values win) and never stored, as Kubernetes converts it on decoding. `type`
 * defaults to Opaque and may not change; each well-known type requires its keys (ValidateSecret).
 * Stored sealed when an EncryptionConfiguration names `secrets`.
 */
import { FieldPath, invalid, required, type FieldError } from '../api/field-errors.js';
import { isObject, type JsonObject } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { validateCoreObjectMeta, validateImmutableField } from './metadata.js';
import { bool, str, strMap } from '../api/schema.js';
import { CORE_V1 } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { MAX_DATA_SIZE, mapAt, tooMuchData, validateDataMap, validateImmutableData } from './config-data.js';

const schema = kindSchema(`${CORE_V1}.Secret`, 'Secret data (credentials, keys, tokens), at most 1 MiB.', {
  data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'Secret data, each value base64 encoded; keys are file names ([-._a-zA-Z0-9]+).' },
  stringData: strMap('Write-only: values written as plain strings, merged into data (winning over it) and never read back.'),
  type: str('Used to ease programmatic handling of secret data; Opaque when not set.'),
  immutable: bool('If true, data can no longer change (only metadata can).'),
});

const data = FieldPath.root('data');

/** The keys each well-known type requires (ValidateSecret's switch). */
function typeErrors(o: KubeObject): FieldError[] {
  const d = mapAt(o, 'data');
  const has = (k: string) => k in d;
  const json = (key: string): FieldError[] => {
    if (!has(key)) return [required(data.key(key), '')];
    try {
      const parsed: unknown = JSON.parse(Buffer.from(String(d[key]), 'base64').toString('utf8'));
      return isObject(parsed) ? [] : [invalid(data.key(key), '<secret contents redacted>', 'json: cannot unmarshal into Go value of type map[string]interface {}')];
    } catch (err) {
      return [invalid(data.key(key), '<secret contents redacted>', (err as Error).message)];
    }
  };
  switch (typeof o.type === 'string' ? o.type : '') {
    case 'kubernetes.io/service-account-token':
      return o.metadata.annotations?.['kubernetes.io/service-account.name'] ? [] : [required(FieldPath.root('metadata').child('annotations').key('kubernetes.io/service-account.name'), '')];
    case 'kubernetes.io/dockercfg':
      return json('.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return json('.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one must be there.
      return has('username') || has('password') ? [] : [required(data.key('username'), ''), required(data.key('password'), '')];
    case 'kubernetes.io/ssh-auth':
      return typeof d['ssh-privatekey'] === 'string' && d['ssh-privatekey'] !== '' ? [] : [required(data.key('ssh-privatekey'), '')];
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [required(data.key('tls.crt'), '')]), ...(has('tls.key') ? [] : [required(data.key('tls.key'), '')])];
    default:
      return [];
  }
}

function validate(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [...validateCoreObjectMeta(o.metadata)];
  if (validateDataMap(mapAt(o, 'data'), data, true, errs) > MAX_DATA_SIZE) errs.push(tooMuchData(data));
  return [...errs, ...typeErrors(o)];
}

export const secret = {
  group: '',
  versions: ['v1'],
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  hasStatus: false,
  schema,
  applyDefaults(o) {
    const plain = o.stringData;
    if (isObject(plain)) {
      const merged: JsonObject = { ...mapAt(o, 'data') };
      for (const [k, v] of Object.entries(plain)) merged[k] = Buffer.from(typeof v === 'string' ? v : '', 'utf8').toString('base64');
      o.data = merged;
    }
    delete o.stringData;
    if (typeof o.type !== 'string' || o.type === '') o.type = 'Opaque';
  },
  validate,
  validateUpdate: (o, old) => [...validateImmutableField(o.type, old.type, FieldPath.root('type')), ...validateImmutableData(o, old, ['data']), ...validate(o)],
  tableColumns: [
    { name: 'Type', type: 'string', description: 'The type of the secret.', priority: 0, cell: (o) => (typeof o.type === 'string' ? o.type : '') },
    { name: 'Data', type: 'integer', description: 'Number of keys.', priority: 0, cell: (o) => Object.keys(mapAt(o, 'data')).length },
  ],
  fieldSelectors: { type: (o) => (typeof o.type === 'string' ? o.type : '') },
} satisfies KindStrategy;
