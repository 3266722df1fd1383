/**
 * Table cells the admission kinds print (Kubernetes' printers.go): PARAMKIND of a policy and
 * PARAMREF of a binding.
 */
import { isObject, listAt, objectAt, stringAt, stringMapAt, stringsOf } from '../api/json-access.js';

/** "group/version/Kind", or "<unset>" without a paramKind. */
export function paramKindCell(spec: unknown): string {
  const pk = objectAt(spec, 'paramKind');
  return pk ? `${stringAt(pk, 'apiVersion')}/${stringAt(pk, 'kind')}` : '<unset>';
}

/**
 * "namespace/name", "*\/name" when the namespace is not given (the printer cannot tell whether the
 * parameter kind is cluster-scoped), the selector's Go struct text, or "<unset>".
 */
export function paramRefCell(spec: unknown): string {
  const pr = objectAt(spec, 'paramRef');
  if (!pr) return '<unset>';
  const name = stringAt(pr, 'name');
  if (name) return `${stringAt(pr, 'namespace') || '*'}/${name}`;
  const sel = objectAt(pr, 'selector');
  return sel ? labelSelectorGoString(sel) : '<unset>';
}

/** The protobuf-generated String() of a LabelSelector, which is what kubectl shows for selectors here. */
export function labelSelectorGoString(sel: unknown): string {
  const labels = stringMapAt(sel, 'matchLabels');
  const keys = Object.keys(labels).sort();
  const matchLabels = `map[string]string{${keys.map((k) => `${k}: ${labels[k]},`).join('')}}`;
  const exprs = listAt(sel, 'matchExpressions')
    .filter(isObject)
    .map((e) => `LabelSelectorRequirement{Key:${stringAt(e, 'key')},Operator:${stringAt(e, 'operator')},Values:[${stringsOf(listAt(e, 'values')).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:${matchLabels},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}
