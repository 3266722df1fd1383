/**
 * What a list or a watch selects: its label, field and shard selectors, parsed and compiled once per
 * request against the kind's own selectable fields, and where the watch engine's live index files a
 * watcher of it.
 */
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { compileFieldSelector, parseFieldSelector, type FieldRequirement } from '../selectors/field-selector.js';
import { indexableTerms, matchesLabels, parseLabelSelector, SelectorError, type Requirement } from '../selectors/label-selector.js';
import { parseShardSelector } from '../selectors/shard-selector.js';
import type { WatchRoute } from '../store/fanout.js';
import { isPathSegmentName } from '../api/name-formats.js';
import { selectorRequirements } from '../resources/label-selector-object.js';
import { badRequest } from './errors.js';

/** The selectors as the request gives them (the query's labelSelector, fieldSelector, shardSelector). */
export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
}

export interface Selection {
  /** The whole selector; undefined when nothing is filtered. */
  matches?: (o: KubeObject) => boolean;
  /** Equality and `in` label terms, which the label index can serve. */
  indexTerms?: { key: string; values: string[] }[];
  /** The shard selector in canonical form, echoed in a list's metadata.shardInfo. */
  shard?: string;
  labels: Requirement[];
  fields: FieldRequirement[];
  /** The selectors as asked, which a continue token is bound to. */
  text: string;
}

/** The selection of a list or watch; a malformed selector or a field the kind cannot select on is BadRequest. */
export function selectionOf(kind: KindStrategy, s: Selectors): Selection {
  const labelSel = s.labelSelector ?? '';
  const fieldSel = s.fieldSelector ?? '';
  const shardSel = s.shardSelector ?? '';
  try {
    const labels = parseLabelSelector(labelSel);
    const fields = parseFieldSelector(fieldSel);
    const fieldTest = fields.length > 0 ? compileFieldSelector(fields, fieldAccessors(kind)) : undefined;
    let shard: ReturnType<typeof parseShardSelector> | undefined;
    try {
      shard = shardSel !== '' ? parseShardSelector(shardSel) : undefined;
    } catch (err) {
      if (err instanceof SelectorError) throw new SelectorError(`invalid shard selector: ${err.message}`);
      throw err;
    }
    const tests: ((o: KubeObject) => boolean)[] = [];
    if (labels.length > 0) tests.push((o) => matchesLabels(labels, o.metadata.labels));
    if (fieldTest) tests.push(fieldTest);
    if (shard) tests.push((o) => shard.matches(o));
    const sel: Selection = { labels, fields, text: [labelSel, fieldSel, shardSel].join('\0') };
    if (tests.length === 1) sel.matches = tests[0];
    else if (tests.length > 1) sel.matches = (o) => tests.every((t) => t(o));
    const terms = indexableTerms(labels);
    if (terms.length > 0) sel.indexTerms = terms;
    if (shard) sel.shard = shard.text;
    return sel;
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

/**
 * A metav1.LabelSelector object (matchLabels, matchExpressions) as a test of labels: what an object's
 * own selector fields select (a ClusterRole's aggregationRule.clusterRoleSelectors).
 */
export function labelSelectorTest(selector: unknown): (labels: Readonly<Record<string, string>> | undefined) => boolean {
  const reqs = selectorRequirements(selector);
  return (labels) => matchesLabels(reqs, labels);
}

/**
 * The name a field selector pins (`metadata.name=<name>`), which authorization sees as the request's
 * name, as kube-apiserver's RequestInfo does; undefined when it pins none or cannot be parsed.
 */
export function nameInFieldSelector(fieldSelector: string): string | undefined {
  try {
    const term = parseFieldSelector(fieldSelector).find((r) => r.field === 'metadata.name' && r.op === '=');
    return term && isPathSegmentName(term.value).length === 0 && term.value !== '' ? term.value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fields a kind's selectors may name. metadata.name and metadata.namespace work for every kind,
 * as in Kubernetes (a cluster-scoped object's namespace is empty); the kind adds its own.
 */
function fieldAccessors(kind: KindStrategy): Record<string, (o: KubeObject) => string> {
  return { ...BUILTIN_FIELDS, ...kind.fieldSelectors };
}

const BUILTIN_FIELDS: Record<string, (o: KubeObject) => string> = {
  'metadata.name': (o) => o.metadata.name ?? '',
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

/**
 * Where the live index files a watcher: under one exact term of its request, the most selective
 * first (its name, a field as the kubelet's spec.nodeName, a label, its namespace), or on the
 * scanned list.
 */
export function watchRoute(kind: KindStrategy, namespace: string | undefined, name: string | undefined, sel: Selection): WatchRoute {
  const fields: Partial<Record<string, (o: KubeObject) => string>> = fieldAccessors(kind);
  if (name !== undefined) return { by: 'field', path: 'metadata.name', value: name, get: fields['metadata.name']! };
  for (const r of sel.fields) {
    const get = fields[r.field];
    if (r.op === '=' && get) return { by: 'field', path: r.field, value: r.value, get };
  }
  for (const r of sel.labels) {
    if ((r.op === '=' || r.op === 'in') && r.values.length === 1) return { by: 'label', key: r.key, value: r.values[0]! };
  }
  return kind.namespaced && namespace !== undefined ? { by: 'namespace', namespace } : { by: 'scan' };
}
