/**
 * How kube-apiserver 1.36 prints a field error's bad value, checked against its source
 * (staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go, ErrorBody, v1.36.3):
 *
 *   case int64, int32, float64, float32, bool:  s = fmt.Sprintf("%s: %v", e.Type, t)
 *   case string:                                s = fmt.Sprintf("%s: %q", e.Type, t)
 *   default: jb, err := json.Marshal(e.BadValue) … s = fmt.Sprintf("%s: %s", e.Type, valstr)
 *
 * Since apimachinery's "nicer value rendering" the default is JSON, not the `%#v` of older
 * releases (`map[string]interface {}{"name":"same"}`), and a nil value prints `null`, unquoted.
 * One test per shape of issue 37's item 7, each through the code that makes it, quoting the line
 * of Kubernetes that builds that error; then the %q and %v renderings themselves.
 */
import { describe, expect, it } from 'vitest';
import { customKindOf } from '../../src/resources/crd/custom-kind.js';
import { customResourceDefinition as crdKind } from '../../src/resources/custom-resource-definition.js';
import { formatFieldError, invalid, FieldPath, notSupported } from '../../src/api/field-errors.js';
import { servedAt } from '../../src/api/strategy.js';
import { fixtures } from './fixtures.js';

const spec = {
  type: 'object',
  properties: {
    addresses: { type: 'array', items: { type: 'string', oneOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
    },
    weights: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'number' } },
    name: { type: 'string', maxLength: 3 },
  },
  'x-kubernetes-validations': [{ rule: 'true' }],
};
const kind = servedAt(
  customKindOf({
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'things', kind: 'Thing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  } as never),
  'v1',
);
const errorsOf = (s: Record<string, unknown>) => kind.validate({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'default' }, spec: s } as never).map(formatFieldError);

describe('the four shapes of issue 37 item 7, as kube-apiserver 1.36 prints them', () => {
  it('a oneOf failure: no field, the value "" quoted by %q', () => {
    // apiextensions-apiserver/pkg/apiserver/validation/validation.go, kubeOpenAPIResultToFieldErrors:
    //   default: allErrs = append(allErrs, field.Invalid(fldPath, "", err.Error()))   (fldPath nil: "<nil>")
    expect(errorsOf({ addresses: ['nope'] })[0]).toBe('<nil>: Invalid value: "": "spec.addresses[0]" must validate one and only one schema (oneOf). Found none valid');
  });

  it('a list-map duplicate: the key as json.Marshal writes a map, keys sorted', () => {
    // apiextensions-apiserver/pkg/apiserver/schema/listtype/validation.go, validateListMap:
    //   errs = append(errs, field.Duplicate(fldPath.Index(i), map[string]interface{}{keyField: keys[i]}))
    expect(errorsOf({ ports: [{ name: 'same' }, { name: 'same', port: 2 }] })).toContain('spec.ports[1]: Duplicate value: {"name":"same"}');
  });

  it('a set duplicate of a float64: %v, in %g form', () => {
    // listtype/validation.go, validateListSetsAndMapsArray: field.Duplicate(fldPath.Index(i), obj[i])
    expect(errorsOf({ weights: [1234567.5, 1234567.5] })).toContain('spec.weights[1]: Duplicate value: 1.2345675e+06');
  });

  it('the trailer after schema errors: no field, a nil value printed null', () => {
    // apiextensions-apiserver/pkg/registry/customresource/strategy.go:
    //   return true, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; …")
    expect(errorsOf({ name: 'toolong' })).toEqual([
      'spec.name: Too long: may not be more than 3 bytes',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it("a rule that does not compile: the internal apiextensions.ValidationRule, json.Marshal's field names and escapes", () => {
    // apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go:
    //   field.Invalid(fldPath.Child("x-kubernetes-validations").Index(i).Child("rule"), schema.XValidations[i], cr.Error.Detail)
    // (the internal ValidationRule has no json tags: Rule, Message, …; Reason and OptionalOldSelf are pointers)
    const c = fixtures.customResourceDefinition();
    c.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.nope < 1 && true', optionalOldSelf: false }];
    crdKind.prepareForCreate(c);
    crdKind.applyDefaults(c);
    const rule = crdKind
      .validate(c)
      .map(formatFieldError)
      .find((m) => m.includes('.rule: Invalid value'));
    expect(rule).toMatch(
      /\.x-kubernetes-validations\[0\]\.rule: Invalid value: \{"Rule":"self\.nope \\u003c 1 \\u0026\\u0026 true","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":false\}: compilation failed: /,
    );
  });
});

describe('the renderings themselves', () => {
  const at = FieldPath.root('spec').child('x');
  it('a string as strconv.Quote: control and invisible characters escaped, printable ones kept (no HTML escaping)', () => {
    expect(formatFieldError(invalid(at, 'a\u0001b\tc\u007f<é>\u200b😀\u{e0001}"\\', 'bad'))).toBe('spec.x: Invalid value: "a\\x01b\\tc\\x7f<é>\\u200b😀\\U000e0001\\"\\\\": bad');
  });
  it('a float64 as %v: exponent form below 1e-4 and from 1e6, as Go writes it', () => {
    expect([0.5, 0.0001, 0.00001, 999999.5, 1234567.5, -2.5e-7].map((v) => formatFieldError(invalid(at, v, 'd')))).toEqual([
      'spec.x: Invalid value: 0.5: d',
      'spec.x: Invalid value: 0.0001: d',
      'spec.x: Invalid value: 1e-05: d',
      'spec.x: Invalid value: 999999.5: d',
      'spec.x: Invalid value: 1.2345675e+06: d',
      'spec.x: Invalid value: -2.5e-07: d',
    ]);
  });
  it('supported values each quoted by strconv.Quote (field.NotSupported)', () => {
    expect(formatFieldError(notSupported(at, 'x', ['a\u0001b', 'c']))).toBe('spec.x: Unsupported value: "x": supported values: "a\\x01b", "c"');
  });
});
