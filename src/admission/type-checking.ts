/**
 * Type checking of a ValidatingAdmissionPolicy against the kinds it matches, as Kubernetes'
 * TypeChecker does for the policy status: at admission time every variable is dynamic (a misspelt
 * field is only an error when a request reaches it), so the status controller compiles each
 * expression again with `object`/`oldObject` typed by every kind the resourceRules name (and
 * `params` by the paramKind), and reports what does not compile:
 *
 *   { fieldRef: 'spec.validations[0].expression',
 *     warning: "/v1, Kind=Namespace: ERROR: <input>:1:13: undefined field 'replicsa'\n | object.spec.replicsa > 1\n | ............^\n" }
 *
 * Kubernetes checks validations and their messageExpressions; orchd checks every expression of the
 * policy (variables, matchConditions, auditAnnotations too), in the order they are evaluated. A policy
 * whose rules name no served kind exactly (wildcards) is checked against nothing and has no warnings.
 */
import { PolicyCompiler, type CelFieldError, type EnvSchemas } from '../cel/index.js';
import { listAt, objectAt, stringAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { gvkText, kindsOfRules, servedKind, type ServedKind } from './served-kinds.js';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

interface Expression {
  fieldRef: string;
  text: string;
  /** Declares `variables.<name>` for the expressions after it. */
  variable?: string;
}

/** Every expression of a policy spec, in evaluation order. */
function expressionsOf(spec: unknown): Expression[] {
  const out: Expression[] = [];
  listAt(spec, 'variables').forEach((v, i) => out.push({ fieldRef: `spec.variables[${i}].expression`, text: stringAt(v, 'expression'), variable: stringAt(v, 'name') }));
  listAt(spec, 'matchConditions').forEach((m, i) => out.push({ fieldRef: `spec.matchConditions[${i}].expression`, text: stringAt(m, 'expression') }));
  listAt(spec, 'validations').forEach((v, i) => {
    out.push({ fieldRef: `spec.validations[${i}].expression`, text: stringAt(v, 'expression') });
    const message = stringAt(v, 'messageExpression');
    if (message) out.push({ fieldRef: `spec.validations[${i}].messageExpression`, text: message });
  });
  listAt(spec, 'auditAnnotations').forEach((a, i) => out.push({ fieldRef: `spec.auditAnnotations[${i}].valueExpression`, text: stringAt(a, 'valueExpression') }));
  return out;
}

const COMPILE_PREFIX = 'compilation failed: ';

/** Kubernetes' TypeCheckingResult text: the kind, then cel-go's issues or the other error. */
function resultText(k: ServedKind, e: CelFieldError): string {
  const detail = e.detail ?? '';
  return detail.startsWith(COMPILE_PREFIX) ? `${gvkText(k)}: ${detail.slice(COMPILE_PREFIX.length)}\n` : `${gvkText(k)}: type checking error: ${detail}\n`;
}

/** The warnings of a policy; empty when every expression compiles against every matched kind. */
export function typeCheckPolicy(policy: KubeObject, kinds: readonly KindStrategy[]): ExpressionWarning[] {
  const spec = objectAt(policy, 'spec');
  const targets = kindsOfRules(kinds, objectAt(spec, 'matchConstraints'));
  if (targets.length === 0) return [];
  const pk = objectAt(spec, 'paramKind');
  const params = pk ? servedKind(kinds, stringAt(pk, 'apiVersion'), stringAt(pk, 'kind')) : undefined;
  const namespace = kinds.find((k) => k.group === '' && k.kind === 'Namespace');
  const expressions = expressionsOf(spec);
  const results = new Map<string, string[]>(expressions.map((e) => [e.fieldRef, []]));
  for (const target of targets) {
    const schemas: EnvSchemas = { object: target.kind.schema, ...(params ? { params: params.schema } : {}), ...(namespace ? { namespace: namespace.schema } : {}) };
    const compiler = new PolicyCompiler({ kind: 'validating', schemas });
    for (const e of expressions) {
      const r = e.variable !== undefined ? compiler.declareVariable(e.variable, e.text, e.fieldRef) : compiler.compile(e.text, { fieldPath: e.fieldRef });
      if (!r.ok) results.get(e.fieldRef)!.push(...r.errors.map((err) => resultText(target, err)));
    }
  }
  return expressions.flatMap((e) => {
    const texts = results.get(e.fieldRef)!;
    return texts.length ? [{ fieldRef: e.fieldRef, warning: texts.join('\n') }] : [];
  });
}
