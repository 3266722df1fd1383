/**
 * The schema of CustomResourceDefinition (apiextensions.orch.io/v1) as Kubernetes publishes it,
 * JSONSchemaProps included: a schema of schemas, so it refers to itself (properties, items, allOf…).
 * Unknown keywords in a CRD's schema are unknown fields like any other (`unknown field
 * "spec.versions[0].schema.openAPIV3Schema.properties[spec].minimun"`), pruned or refused under Strict.
 */
import { kindSchema } from '../kind-schema.js';
import { timeSchema } from '../meta-schema.js';
import { arrayOf, atomicList, bool, int, obj, str, type Schema } from '../../api/schema.js';

export const CRD_GROUP = 'apiextensions.orch.io';
const V1 = 'io.orch.api.apiextensions.v1';

/** Any JSON value (a default, an example, an enum member): nothing below it is checked. */
const json: Schema = { refName: `${V1}.JSON`, description: 'Any valid JSON value.', 'x-kubernetes-preserve-unknown-fields': true };

const validationRule = obj(
  `${V1}.ValidationRule`,
  {
    fieldPath: str('Where a failure is reported, a JSON path below the schema the rule sits on (.spec.replicas).'),
    message: str('What a failure says; default: "failed rule: <rule>".'),
    messageExpression: str('A CEL expression whose string result is the failure message.'),
    optionalOldSelf: bool('Run the transition rule on create too, with oldSelf an optional.'),
    reason: str('FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.'),
    rule: str('A CEL expression that must be true; self is the value, oldSelf the stored one (a transition rule).'),
  },
  { required: ['rule'], description: 'A validation rule in CEL.' },
);

/** JSONSchemaProps: built in place, as it contains itself. */
export const jsonSchemaProps: Schema = { type: 'object', refName: `${V1}.JSONSchemaProps`, description: 'A JSON-Schema following Specification Draft 4.', properties: {} };
const schemaMap: Schema = { type: 'object', additionalProperties: jsonSchemaProps };
const orBool = (name: string, what: string): Schema => ({ refName: `${V1}.${name}`, description: what, 'x-kubernetes-preserve-unknown-fields': true });
const num = (description: string): Schema => ({ type: 'number', format: 'double', description });
const count = (description: string): Schema => int(description, 'int64');

Object.assign(jsonSchemaProps.properties!, {
  $ref: str(),
  $schema: str(),
  additionalItems: orBool('JSONSchemaPropsOrBool', 'A schema, or a boolean.'),
  additionalProperties: orBool('JSONSchemaPropsOrBool', 'A schema for the values of a map, or a boolean.'),
  allOf: atomicList(jsonSchemaProps),
  anyOf: atomicList(jsonSchemaProps),
  default: { ...json, description: 'The value a missing field gets (structural schemas only).' },
  definitions: schemaMap,
  dependencies: { type: 'object', additionalProperties: orBool('JSONSchemaPropsOrStringArray', 'A schema, or a list of property names.') },
  description: str(),
  enum: atomicList(json),
  example: json,
  exclusiveMaximum: bool(),
  exclusiveMinimum: bool(),
  externalDocs: obj(`${V1}.ExternalDocumentation`, { description: str(), url: str() }),
  format: str(
    'bsonobjectid, uri, email, hostname, ipv4, ipv6, cidr, mac, uuid, uuid3, uuid4, uuid5, isbn, isbn10, isbn13, creditcard, ssn, hexcolor, rgbcolor, byte, password, date, duration, datetime, int32, int64, float, double…',
  ),
  id: str(),
  items: { ...jsonSchemaProps, description: 'The schema of every item of an array.' },
  maxItems: count('Most items.'),
  maxLength: count('Most characters.'),
  maxProperties: count('Most properties.'),
  maximum: num('Largest value.'),
  minItems: count('Fewest items.'),
  minLength: count('Fewest characters.'),
  minProperties: count('Fewest properties.'),
  minimum: num('Smallest value.'),
  multipleOf: num('The value is a multiple of this.'),
  not: { ...jsonSchemaProps, description: 'A schema the value must not match.' },
  nullable: bool('null is a valid value (it is otherwise pruned, or refused).'),
  oneOf: atomicList(jsonSchemaProps),
  pattern: str('An ECMA 262 regular expression every string value matches.'),
  patternProperties: schemaMap,
  properties: schemaMap,
  required: atomicList(str()),
  title: str(),
  type: str('object, array, string, integer, number or boolean.'),
  uniqueItems: bool(),
  'x-kubernetes-embedded-resource': bool('The object is a whole resource: apiVersion, kind and metadata are kept and checked.'),
  'x-kubernetes-int-or-string': bool('An integer or a string.'),
  'x-kubernetes-list-map-keys': atomicList(str(), 'The keys that identify an item of a map list.'),
  'x-kubernetes-list-type': str('atomic, set or map.'),
  'x-kubernetes-map-type': str('granular or atomic.'),
  'x-kubernetes-preserve-unknown-fields': bool('Fields the schema does not name are kept (not pruned).'),
  'x-kubernetes-validations': {
    ...arrayOf(validationRule),
    description: 'CEL rules the value must pass.',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['rule'],
    'x-kubernetes-patch-strategy': 'merge',
    'x-kubernetes-patch-merge-key': 'rule',
  },
} satisfies Record<string, Schema>);

const names = obj(
  `${V1}.CustomResourceDefinitionNames`,
  {
    categories: atomicList(str(), 'Groups this resource belongs to (`kubectl get all`).'),
    kind: str('The kind, CamelCase.'),
    listKind: str('The kind of its lists; default <kind>List.'),
    plural: str('The resource name, lowercase: /apis/<group>/<version>/<plural>.'),
    shortNames: atomicList(str(), 'Short names kubectl accepts.'),
    singular: str('The singular resource name, lowercase; default the kind in lowercase.'),
  },
  { required: ['plural', 'kind'], description: 'The names a custom resource is served under.' },
);

const column = obj(
  `${V1}.CustomResourceColumnDefinition`,
  {
    description: str(),
    format: str('int32, int64, float, double, byte, date, date-time or password.'),
    jsonPath: str('A simple JSON path evaluated against each object for the cell.'),
    name: str('The column heading.'),
    priority: int('0: shown by default; greater: only in wide output.'),
    type: str('integer, number, string, boolean or date.'),
  },
  { required: ['name', 'type', 'jsonPath'], description: 'A column of `kubectl get`.' },
);

const subresources = obj(
  `${V1}.CustomResourceSubresources`,
  {
    scale: obj(
      `${V1}.CustomResourceSubresourceScale`,
      {
        labelSelectorPath: str('Where the selector of the scale is, under .spec or .status (a string).'),
        specReplicasPath: str('Where the desired replicas are, under .spec.'),
        statusReplicasPath: str('Where the observed replicas are, under .status.'),
      },
      { required: ['specReplicasPath', 'statusReplicasPath'], description: 'The /scale subresource.' },
    ),
    status: obj(`${V1}.CustomResourceSubresourceStatus`, {}, { description: 'The /status subresource: status is written only through it.' }),
  },
  { description: 'The subresources served for a version.' },
);

const version = obj(
  `${V1}.CustomResourceDefinitionVersion`,
  {
    additionalPrinterColumns: atomicList(column, 'Columns `kubectl get` prints.'),
    deprecated: bool(),
    deprecationWarning: str(),
    name: str('The version name: v1, v2beta1…'),
    schema: obj(`${V1}.CustomResourceValidation`, { openAPIV3Schema: jsonSchemaProps }, { description: 'The schema of this version.' }),
    selectableFields: atomicList(obj(`${V1}.SelectableField`, { jsonPath: str() }, { required: ['jsonPath'] }), 'Fields usable in field selectors.'),
    served: bool('Served through the REST API.'),
    storage: bool('The one version objects are stored at.'),
    subresources,
  },
  { required: ['name', 'served', 'storage'], description: 'One version of a custom resource.' },
);

const conversion = obj(
  `${V1}.CustomResourceConversion`,
  {
    strategy: str('None (only apiVersion changes between versions) or Webhook.'),
    webhook: obj(
      `${V1}.WebhookConversion`,
      {
        clientConfig: obj(`${V1}.WebhookClientConfig`, {
          caBundle: str(undefined, { format: 'byte' }),
          service: obj(`${V1}.ServiceReference`, { name: str(), namespace: str(), path: str(), port: int() }, { required: ['namespace', 'name'] }),
          url: str(),
        }),
        conversionReviewVersions: atomicList(str()),
      },
      { required: ['conversionReviewVersions'] },
    ),
  },
  { required: ['strategy'], description: 'How objects are converted between versions.' },
);

const condition = obj(
  `${V1}.CustomResourceDefinitionCondition`,
  { lastTransitionTime: timeSchema, message: str(), reason: str(), status: str(), type: str('NamesAccepted, Established, Terminating…') },
  { required: ['type', 'status'] },
);

export const crdSchema = kindSchema(`${V1}.CustomResourceDefinition`, 'A resource defined at run time: its names, versions and schema.', {
  spec: obj(
    `${V1}.CustomResourceDefinitionSpec`,
    {
      conversion,
      group: str('The API group, a DNS subdomain with at least one dot.'),
      names,
      preserveUnknownFields: bool('Must be false (v1): unknown fields are pruned unless a schema preserves them.'),
      scope: str('Cluster or Namespaced.'),
      versions: atomicList(version, 'The versions served; exactly one is stored.'),
    },
    { required: ['group', 'names', 'scope', 'versions'] },
  ),
  status: obj(`${V1}.CustomResourceDefinitionStatus`, {
    acceptedNames: names,
    conditions: {
      ...arrayOf(condition),
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'type',
    },
    storedVersions: atomicList(str(), 'Every version objects were ever stored at.'),
  }),
});
