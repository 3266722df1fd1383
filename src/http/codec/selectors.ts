import type { KindStrategy } from '../../resources/strategy.js';
import type { KubeObject } from '../../resources/types.js';
import { compileFieldSelector, parseFieldSelector } from '../../selectors/field-selector.js';
import { indexableTerms, matchesLabels, parseLabelSelector, SelectorError } from '../../selectors/label-selector.js';
import { parseShardSelector } from '../../selectors/shard-selector.js';
import * as E from '../respond/status.js';

/** A list's or watch's selection: labels, fields (per kind) and shard, compiled once for the request. */
export interface Selection {
  /** The whole selector; undefined when nothing is filtered. */
  matches?: (o: KubeObject) => boolean;
  /** Equality and `in` label terms, which the label index can serve. */
  indexTerms?: { key: string; values: string[] }[];
  /** The shard selector in canonical form, echoed in a list's metadata.shardInfo. */
  shard?: string;
}

/** Selector of a list or watch (labels, fields, shard); undefined when the request filters nothing. */
export function selectorOf(kind: KindStrategy, params: URLSearchParams): ((o: KubeObject) => boolean) | undefined {
  return selectionOf(kind, params).matches;
}

/** The selection a request asks for; a malformed selector or an unsupported field is a 400. */
export function selectionOf(kind: KindStrategy, params: URLSearchParams): Selection {
  const labelSel = params.get('labelSelector') ?? '';
  const fieldSel = params.get('fieldSelector') ?? '';
  const shardSel = params.get('shardSelector') ?? '';
  try {
    const labels = parseLabelSelector(labelSel);
    const fieldReqs = parseFieldSelector(fieldSel);
    const fields = fieldReqs.length > 0 ? compileFieldSelector(fieldReqs, fieldAccessors(kind)) : undefined;
    let shard: ReturnType<typeof parseShardSelector> | undefined;
    try {
      shard = shardSel !== '' ? parseShardSelector(shardSel) : undefined;
    } catch (err) {
      if (err instanceof SelectorError) throw new SelectorError(`invalid shard selector: ${err.message}`);
      throw err;
    }
    const tests: ((o: KubeObject) => boolean)[] = [];
    if (labels.length > 0) tests.push((o) => matchesLabels(labels, o.metadata.labels));
    if (fields) tests.push(fields);
    if (shard) tests.push((o) => shard.matches(o));
    const sel: Selection = {};
    if (tests.length === 1) sel.matches = tests[0];
    else if (tests.length > 1) sel.matches = (o) => tests.every((t) => t(o));
    const terms = indexableTerms(labels);
    if (terms.length > 0) sel.indexTerms = terms;
    if (shard) sel.shard = shard.text;
    return sel;
  } catch (err) {
    if (err instanceof SelectorError) throw E.badRequest(err.message);
    throw err;
  }
}

/**
 * The fields a kind's selectors may name. metadata.name and metadata.namespace work for every kind,
 * as in Kubernetes (a cluster-scoped object's namespace is empty); the kind adds its own.
 */
function fieldAccessors(kind: KindStrategy): Record<string, (o: KubeObject) => string> {
  return {
    'metadata.name': (o) => o.metadata.name ?? '',
    'metadata.namespace': (o: KubeObject) => o.metadata.namespace ?? '',
    ...kind.fieldSelectors,
  };
}
