/**
 * Response media negotiation: JSON or YAML, from the Accept header, as kube-apiserver's
 * NegotiateOutputMediaType does it. Table conversions (`as=Table`) are decided in table.ts; this
 * only picks the serialization.
 */
import { parseAccept, rangeMatches, type MediaRange } from '../../discovery/accept.js';
import type { Output } from '../respond/respond.js';
import { notAcceptable } from '../respond/status.js';
import { servedTable } from '../respond/table.js';

/**
 * Accept or Content-Type values as media ranges (type, subtype, parameters, q), in the client's
 * order of preference. The one parser is accept.ts's; this name is what other modules were told to
 * import.
 */
export { parseAccept as parseMediaRange, type MediaRange };

/** What orchd serializes, in its order of preference for wildcards (JSON first, as Kubernetes). */
const SERVED: readonly [Output['format'], string, string][] = [
  ['json', 'application', 'json'],
  ['yaml', 'application', 'yaml'],
];

/**
 * The format for an Accept header: the first range, by q and then the client's order, that orchd
 * can serve. No header (or an empty one) means JSON; one that names only what orchd does not serve
 * (`application/vnd.kubernetes.protobuf`, `text/html`) is a 406, as in Kubernetes. A range asking
 * for a conversion other than a meta.k8s.io Table v1 or v1beta1 (`as=PartialObjectMetadataList`,
 * `as=Table;v=v2`) is passed over, as kube-apiserver passes over transformations an endpoint does
 * not allow: with nothing after it, a 406.
 *
 *   negotiateResponse('application/json;q=0.9, application/yaml') → 'yaml'
 *   negotiateResponse('application/vnd.kubernetes.protobuf, *\/*') → 'json'
 */
export function negotiateResponse(accept: string | string[] | undefined): Output['format'] {
  const header = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  if (header.trim() === '') return 'json';
  for (const range of parseAccept(header)) {
    if (range.params.as !== undefined && !servedTable(range)) continue;
    for (const [format, type, subtype] of SERVED) if (rangeMatches(range, type, subtype)) return format;
  }
  throw notAcceptable(header);
}
