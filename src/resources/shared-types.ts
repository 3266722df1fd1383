/**
 * Schemas of the nested types several kinds share: the admissionregistration building blocks
 * (rules, MatchResources, ParamKind, ParamRef, MatchCondition, Variable) and the core ObjectReference
 * and EventSource. Written once here so the policies, bindings and webhooks cannot drift apart.
 */
import { labelSelectorSchema } from './meta-schema.js';
import { atomicList, mergeList, obj, str, type Schema } from '../api/schema.js';

export const ADMISSION_V1 = 'io.orch.api.admissionregistration.v1';
export const CORE_V1 = 'io.orch.api.core.v1';

export const FAILURE_POLICIES = ['Fail', 'Ignore'] as const;
export const MATCH_POLICIES = ['Equivalent', 'Exact'] as const;
export const SCOPES = ['*', 'Cluster', 'Namespaced'] as const;
export const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'] as const;
export const REINVOCATION_POLICIES = ['IfNeeded', 'Never'] as const;
const enumOf = (values: readonly string[], description: string): Schema => str(description, { enum: [...values] });

export const failurePolicySchema = enumOf(FAILURE_POLICIES, 'How errors of the admission call are handled: Fail rejects the request, Ignore lets it through.');
export const matchPolicySchema = enumOf(MATCH_POLICIES, 'Exact matches only the listed group/version/resource; Equivalent also matches the same resource through another version or group.');
export const reinvocationPolicySchema = enumOf(REINVOCATION_POLICIES, 'Never: called at most once per admission evaluation; IfNeeded: called again when a later mutation changed the object.');

/** Rule's fields, which RuleWithOperations and NamedRuleWithOperations inline. */
const ruleProperties: Record<string, Schema> = {
  apiGroups: atomicList(str(), 'API groups the rule matches; "*" is all groups.'),
  apiVersions: atomicList(str(), 'API versions the rule matches; "*" is all versions.'),
  resources: atomicList(str(), 'Resources the rule matches, "resource/subresource" for a subresource; "*" is all resources, "*/*" all resources and subresources.'),
  scope: enumOf(SCOPES, 'Cluster, Namespaced, or "*" for both (the default).'),
};
const operationsSchema = atomicList(enumOf(OPERATIONS, 'CREATE, UPDATE, DELETE, CONNECT, or "*" for all.'), 'Operations the rule matches.');

export const ruleWithOperationsSchema = obj(`${ADMISSION_V1}.RuleWithOperations`, { ...ruleProperties, operations: operationsSchema }, { description: 'Operations on a set of API resources.' });

export const namedRuleWithOperationsSchema = obj(
  `${ADMISSION_V1}.NamedRuleWithOperations`,
  { ...ruleProperties, operations: operationsSchema, resourceNames: atomicList(str(), 'Object names the rule is limited to; empty means all.') },
  { 'x-kubernetes-map-type': 'atomic', description: 'Operations on a set of API resources, optionally limited to some names.' },
);

export const matchResourcesSchema = obj(
  `${ADMISSION_V1}.MatchResources`,
  {
    excludeResourceRules: atomicList(namedRuleWithOperationsSchema, 'Requests matching any of these are excluded, whatever else matches.'),
    matchPolicy: matchPolicySchema,
    namespaceSelector: { ...labelSelectorSchema, description: 'Selects by the labels of the namespace of the object; empty matches all.' },
    objectSelector: { ...labelSelectorSchema, description: 'Selects by the labels of the object (old or new); empty matches all.' },
    resourceRules: atomicList(namedRuleWithOperationsSchema, 'Requests matching any of these are candidates.'),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'Which requests a policy or binding applies to; all constraints must match.' },
);

export const paramKindSchema = obj(
  `${ADMISSION_V1}.ParamKind`,
  { apiVersion: str('API version of the parameter resources, "group/version".'), kind: str('Kind of the parameter resources.') },
  { 'x-kubernetes-map-type': 'atomic', description: 'The kind of resources that parameterize a policy.' },
);

export const paramRefSchema = obj(
  `${ADMISSION_V1}.ParamRef`,
  {
    name: str('Name of the single parameter resource; excludes selector.'),
    namespace: str('Namespace of the parameter resources; empty for cluster-scoped kinds or the request namespace.'),
    parameterNotFoundAction: str('Allow or Deny when no parameter resource matches.'),
    selector: { ...labelSelectorSchema, description: 'Selects several parameter resources; the policy is evaluated once per match. Excludes name.' },
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'The parameter resource(s) a binding passes to its policy.' },
);

export const matchConditionSchema = obj(
  `${ADMISSION_V1}.MatchCondition`,
  {
    expression: str('CEL expression returning a bool; the request is filtered out when it is false.'),
    name: str('Identifier of the condition, a qualified name, unique in the list.'),
  },
  { required: ['name', 'expression'], description: 'A CEL condition a request must meet.' },
);

/** matchConditions are merged by name wherever they appear. */
export const matchConditionsSchema = (description: string): Schema => mergeList(matchConditionSchema, 'name', description);

export const variableSchema = obj(
  `${ADMISSION_V1}.Variable`,
  {
    expression: str('CEL expression computing the value.'),
    name: str('Name under which the value is reachable as `variables.<name>`; a CEL identifier.'),
  },
  { required: ['name', 'expression'], 'x-kubernetes-map-type': 'atomic', description: 'A named CEL expression other expressions can use.' },
);

export const objectReferenceSchema = obj(
  `${CORE_V1}.ObjectReference`,
  {
    apiVersion: str('API version of the referent.'),
    fieldPath: str('A part of the object, e.g. spec.containers{name}.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    resourceVersion: str('Version of the referent the reference was made for.'),
    uid: str('UID of the referent.'),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'A reference to another object.' },
);

export const eventSourceSchema = obj(
  `${CORE_V1}.EventSource`,
  { component: str('Component that generated the event.'), host: str('Node name the event was generated on.') },
  { description: 'Where an event came from.' },
);
