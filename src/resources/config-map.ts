/**
 * ConfigMap (core v1): configuration as string data (and bytes, base64, in binaryData), validated
 * as Kubernetes' ValidateConfigMap: file-name keys, no key in both maps, at most 1 MiB in all.
 */
import { FieldPath, invalid, type FieldError } from '../api/field-errors.js';
import { kindSchema } from './kind-schema.js';
import { validateCoreObjectMeta } from './metadata.js';
import { bool, strMap } from '../api/schema.js';
import { CORE_V1 } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { mapAt, tooMuchData, validateDataMap, validateImmutableData } from './config-data.js';
import { MAX_DATA_SIZE } from './config-data.js';

const schema = kindSchema(`${CORE_V1}.ConfigMap`, 'Configuration data for pods and controllers to consume.', {
  data: strMap('UTF-8 configuration data; keys are file names ([-._a-zA-Z0-9]+).'),
  binaryData: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'Binary configuration data, base64 encoded; keys may not repeat those of data.' },
  immutable: bool('If true, data and binaryData can no longer change (only metadata can).'),
});

function validate(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [...validateCoreObjectMeta(o.metadata)];
  const data = mapAt(o, 'data');
  let size = validateDataMap(data, FieldPath.root('data'), false, errs);
  const binary = mapAt(o, 'binaryData');
  for (const key of Object.keys(binary)) if (key in data) errs.push(invalid(FieldPath.root('binaryData').key(key), key, 'duplicate of key present in data'));
  size += validateDataMap(binary, FieldPath.root('binaryData'), true, errs);
  if (size > MAX_DATA_SIZE) errs.push(tooMuchData(FieldPath.root('')));
  return errs;
}

export const configMap = {
  group: '',
  versions: ['v1'],
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  hasStatus: false,
  schema,
  applyDefaults() {},
  validate,
  validateUpdate: (o, old) => [...validateImmutableData(o, old, ['data', 'binaryData']), ...validate(o)],
  tableColumns: [{ name: 'Data', type: 'integer', description: 'Number of keys.', priority: 0, cell: (o) => Object.keys(mapAt(o, 'data')).length + Object.keys(mapAt(o, 'binaryData')).length }],
} satisfies KindStrategy;
