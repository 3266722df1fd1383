import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { compileFieldSelector, parseFieldSelector } from '../store/field-selector.js';
import { matchesLabels, parseLabelSelector, SelectorError } from '../store/label-selector.js';
import * as E from './status.js';

/** Selector of a list or watch: labels, fields (per kind), compiled once for the request. */
export function selectorOf(kind: KindStrategy, params: URLSearchParams): ((o: KubeObject) => boolean) | undefined {
  const labelSel = params.get('labelSelector') ?? '';
  const fieldSel = params.get('fieldSelector') ?? '';
  if (!labelSel && !fieldSel) return undefined;
  try {
    const labels = parseLabelSelector(labelSel);
    const fields = compileFieldSelector(parseFieldSelector(fieldSel), fieldAccessors(kind));
    return (o) => matchesLabels(labels, o.metadata.labels) && fields(o);
  } catch (err) {
    if (err instanceof SelectorError) throw E.badRequest(err.message);
    throw err;
  }
}

function fieldAccessors(kind: KindStrategy): Record<string, (o: KubeObject) => string> {
  return {
    'metadata.name': (o) => o.metadata.name ?? '',
    ...(kind.namespaced ? { 'metadata.namespace': (o: KubeObject) => o.metadata.namespace ?? '' } : {}),
    ...kind.fieldSelectors,
  };
}

