/**
 * The admission environments: which variables an expression sees, and their types.
 *
 *   validating   (ValidatingAdmissionPolicy validations, messageExpression, auditAnnotations, and
 *                 policy matchConditions): object, oldObject, request, params, namespaceObject,
 *                 authorizer, variables
 *   mutating     (MutatingAdmissionPolicy mutations): the same, plus object construction
 *                 (Object{…}, Object.spec{…}, JSONPatch{…}) and jsonpatch.escapeKey
 *   webhookMatchCondition (MutatingWebhook matchConditions): object, oldObject, request, authorizer
 *   schemaRule   (a CustomResourceDefinition's x-kubernetes-validations): self, the value the rule
 *                 sits on, and oldSelf, its stored value (a transition rule); typed by that schema
 *
 * Each expression is checked in an environment whose types come from the schemas (so a misspelt
 * field is a compile error) and run in one where every variable is dynamic (so no value is wrapped
 * at run time). The checker and the evaluator are the same library, so they agree on the language.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { createCelEnvironment } from './environment.js';
import { registerAuthorizer } from './lib/authorizer.js';
import { registerObjects } from './lib/objects.js';
import { escapeProperty, isReservedWord } from './escaping.js';
import { celEquals } from './lib/common.js';
import type { CelSchema } from './schema.js';

export type EnvKind = 'validating' | 'mutating' | 'webhookMatchCondition' | 'schemaRule';

/** The schemas that type an environment; any left out is dynamic (anything goes, as in Kubernetes). */
export interface EnvSchemas {
  /** The schema of the kind being admitted (object and oldObject); of self and oldSelf for a schema rule. */
  object?: CelSchema;
  /** The schema of the policy's paramKind. */
  params?: CelSchema;
  /** The schema of Namespace (namespaceObject). */
  namespace?: CelSchema;
  /** schemaRule: oldSelf is an optional (a rule with optionalOldSelf also runs on create). */
  optionalOldSelf?: boolean;
}

const str: CelSchema = { type: 'string' };
const gvk = (last: 'kind' | 'resource'): CelSchema => ({ type: 'object', properties: { group: str, version: str, [last]: str } });

/** The `request` variable: Kubernetes' admission request attributes. */
export const REQUEST_SCHEMA: CelSchema = {
  type: 'object',
  properties: {
    uid: str,
    kind: gvk('kind'),
    resource: gvk('resource'),
    subResource: str,
    requestKind: gvk('kind'),
    requestResource: gvk('resource'),
    requestSubResource: str,
    name: str,
    namespace: str,
    operation: str,
    userInfo: {
      type: 'object',
      properties: {
        username: str,
        uid: str,
        groups: { type: 'array', items: str },
        extra: { type: 'object', additionalProperties: { type: 'array', items: str } },
      },
    },
    dryRun: { type: 'boolean' },
    options: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';

/** The variables of each kind, besides `variables` (declared by the compiler, in order). */
export function variableNames(kind: EnvKind): string[] {
  if (kind === 'schemaRule') return ['self', 'oldSelf'];
  return kind === 'webhookMatchCondition' ? ['object', 'oldObject', 'request', 'authorizer'] : ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'authorizer'];
}

export function hasVariablesVariable(kind: EnvKind): boolean {
  return kind !== 'webhookMatchCondition' && kind !== 'schemaRule';
}

const bases = new Map<EnvKind, Environment>();

/** The libraries of a kind, before any variable; shared and frozen once cloned. */
function baseFor(kind: EnvKind): Environment {
  let env = bases.get(kind);
  if (!env) {
    env = createCelEnvironment();
    registerAuthorizer(env);
    if (kind === 'mutating') registerObjects(env);
    bases.set(kind, env);
  }
  return env;
}

const evaluators = new Map<EnvKind, Environment>();

/** The environment programs run in: every variable dynamic. */
export function evaluatorFor(kind: EnvKind): Environment {
  let env = evaluators.get(kind);
  if (!env) {
    env = baseFor(kind).clone();
    for (const name of variableNames(kind)) env.registerVariable(name, 'dyn');
    if (hasVariablesVariable(kind)) env.registerVariable('variables', 'dyn');
    evaluators.set(kind, env);
  }
  return env;
}

const checkers = new Map<EnvKind, WeakMap<object, Environment>>();
const NONE = {};
const OPTIONAL_OLD_SELF = {};

/**
 * The environment expressions are checked in: variables typed by the schemas. Cached per schema
 * objects, so policies matching the same kind share it. `variables` is left for the compiler.
 */
export function checkerFor(kind: EnvKind, schemas: EnvSchemas = {}): Environment {
  let byObject = checkers.get(kind);
  if (!byObject) checkers.set(kind, (byObject = new WeakMap()));
  const key = schemas.object ?? NONE;
  const keyParams = schemas.params ?? NONE;
  const keyNs = schemas.namespace ?? (schemas.optionalOldSelf ? OPTIONAL_OLD_SELF : NONE);
  const cacheKey = chainKey(key, keyParams, keyNs);
  const hit = byObject.get(cacheKey);
  if (hit) return hit;
  const env = baseFor(kind).clone();
  const names = variableNames(kind);
  if (kind === 'schemaRule') {
    const selfType = declareSchemaType(env, 'Self', schemas.object, true);
    env.registerVariable('self', selfType);
    // An optional's methods (hasValue, orValue…) are checked against dyn: the library declares no optional<T> variables.
    env.registerVariable('oldSelf', schemas.optionalOldSelf ? 'dyn' : selfType);
    byObject.set(cacheKey, env);
    return env;
  }
  const objectType = declareRoot(env, 'Object', schemas.object);
  env.registerVariable('object', objectType);
  env.registerVariable('oldObject', objectType);
  env.registerVariable('request', declareSchemaType(env, 'kubernetes.AdmissionRequest', REQUEST_SCHEMA));
  if (names.includes('params')) env.registerVariable('params', declareRoot(env, 'Params', schemas.params));
  if (names.includes('namespaceObject')) env.registerVariable('namespaceObject', declareRoot(env, 'Namespace', schemas.namespace));
  env.registerVariable('authorizer', AUTHORIZER_TYPE);
  byObject.set(cacheKey, env);
  return env;
}

/** One stable object per (object, params, namespace) schema triple, usable as a WeakMap key. */
const chains = new WeakMap<object, WeakMap<object, WeakMap<object, object>>>();
function chainKey(a: object, b: object, c: object): object {
  let m1 = chains.get(a);
  if (!m1) chains.set(a, (m1 = new WeakMap()));
  let m2 = m1.get(b);
  if (!m2) m1.set(b, (m2 = new WeakMap()));
  let k = m2.get(c);
  if (!k) m2.set(c, (k = {}));
  return k;
}

/** A root variable's type: it may be null (object on DELETE, oldObject on CREATE, no params). */
function declareRoot(env: Environment, name: string, s: CelSchema | undefined): string {
  const type = declareSchemaType(env, name, s);
  if (type === name) env.registerOperator(`${name} == null`, (a: unknown, b: unknown) => a === b);
  return type;
}

/**
 * Registers the struct types a schema needs (children first) and returns the CEL type string.
 * `escaped`: fields are named as a CRD's rules name them (escaping.ts), and a property with no
 * CEL name is left out; admission policies name them as they are (Kubernetes only type-checks
 * those against the schema for warnings, and runs them on the plain object).
 */
export function declareSchemaType(env: Environment, name: string, s: CelSchema | undefined, escaped = false, open = new Set<CelSchema>()): string {
  if (!s || s['x-kubernetes-int-or-string'] || s['x-kubernetes-embedded-resource']) return 'dyn';
  // A schema inside itself (a CRD's JSONSchemaProps) is an object of unknown fields there, as
  // Kubernetes' resolver replaces a circular $ref with a bare object.
  if (open.has(s)) return 'map<string, dyn>';
  open.add(s);
  try {
    return declareUncut(env, name, s, escaped, open);
  } finally {
    open.delete(s);
  }
}

function declareUncut(env: Environment, name: string, s: CelSchema, escaped: boolean, open: Set<CelSchema>): string {
  switch (s.type) {
    case 'string':
      // A CRD rule sees formats as Kubernetes types them (SchemaDeclType); values.ts converts the values alike.
      return escaped ? (FORMAT_TYPES[s.format ?? ''] ?? 'string') : 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${declareSchemaType(env, name, s.items, escaped, open)}>`;
    case 'object': {
      if (typeof s.additionalProperties === 'object') return `map<string, ${declareSchemaType(env, name, s.additionalProperties, escaped, open)}>`;
      if (!s.properties || s['x-kubernetes-preserve-unknown-fields']) return 'map<string, dyn>';
      const fields: Record<string, string> = {};
      for (const [prop, ps] of Object.entries(s.properties)) {
        const field = escaped ? escapeProperty(prop) : prop;
        if (field !== undefined) fields[field] = declareSchemaType(env, `${name}.${typeSafe(prop)}`, ps, escaped, open);
        // `self.namespace` reaches `__namespace__` too (escaping.ts isReservedWord); values.ts keys the value both ways.
        if (escaped && field !== undefined && isReservedWord(prop)) fields[prop] = fields[field]!;
      }
      env.registerType(name, { fields });
      // As in cel-go, an object compares with another of its type and with null (`self.items[0] == null`).
      env.registerOperator(`${name} == ${name}`, celEquals);
      if (escaped) env.registerOperator(`${name} == null`, (a: unknown, b: unknown) => a === b);
      return name;
    }
    default:
      return 'dyn';
  }
}

const FORMAT_TYPES: Record<string, string> = { byte: 'bytes', date: 'google.protobuf.Timestamp', 'date-time': 'google.protobuf.Timestamp', duration: 'google.protobuf.Duration' };

function typeSafe(prop: string): string {
  return prop.replace(/[^A-Za-z0-9_]/g, '_');
}
