/**
 * Where a webhook is called (Kubernetes' apiserver util/webhook validation): exactly one of an
 * https URL without user info, query or fragment, or an in-cluster service with a DNS-like path.
 */
import { FieldPath, invalid, required, type FieldError } from '../api/field-errors.js';
import { isSet, numberAt, objectAt, stringAt } from '../api/json-access.js';
import { isDNS1123Subdomain } from '../api/name-formats.js';

const FORM = '; desired format: https://host[/path]';

interface ParsedUrl {
  scheme: string;
  user?: string;
  host: string;
  query: string;
  fragment: string;
}

/** A URL split the way Go's url.Parse splits it: lenient, failing only on what Go rejects. */
function parseUrl(raw: string): ParsedUrl | Error {
  if (/[\x00-\x1f\x7f]/.test(raw)) return new Error(`parse ${JSON.stringify(raw)}: net/url: invalid control character in URL`);
  if (raw.startsWith(':')) return new Error(`parse ${JSON.stringify(raw)}: missing protocol scheme`);
  let rest = raw;
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s.exec(rest);
  const scheme = m ? m[1].toLowerCase() : '';
  rest = m ? m[2] : rest;
  if (!rest.startsWith('//')) return { scheme, host: '', query, fragment };
  const authority = rest.slice(2).split('/')[0];
  const at = authority.lastIndexOf('@');
  return at >= 0 ? { scheme, user: authority.slice(0, at), host: authority.slice(at + 1), query, fragment } : { scheme, host: authority, query, fragment };
}

export function validateWebhookUrl(url: string, p: FieldPath): FieldError[] {
  const u = parseUrl(url);
  if (u instanceof Error) return [required(p, `url must be a valid URL: ${u.message}${FORM}`)];
  const errs: FieldError[] = [];
  if (u.scheme !== 'https') errs.push(invalid(p, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (!u.host) errs.push(invalid(p, u.host, `host must be provided${FORM}`));
  if (u.user !== undefined) errs.push(invalid(p, u.user, 'user information is not permitted in the URL'));
  if (u.fragment) errs.push(invalid(p, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query) errs.push(invalid(p, u.query, 'query parameters are not permitted in the URL'));
  return errs;
}

/** service: name and namespace required, port 1..65535 (defaulted to 443), path of DNS-subdomain segments. */
export function validateWebhookService(svc: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(svc, 'name')) errs.push(required(p.child('name'), 'service name is required'));
  if (!stringAt(svc, 'namespace')) errs.push(required(p.child('namespace'), 'service namespace is required'));
  const port = numberAt(svc, 'port') ?? 0;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) errs.push(invalid(p.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (!isSet(svc, 'path')) return errs;
  const path = stringAt(svc, 'path');
  if (path === '/' || path === '') return errs;
  const pp = p.child('path');
  if (path === '//') return [...errs, invalid(pp, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(invalid(pp, path, "must start with a '/'"));
  let check = path.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step === '') errs.push(invalid(pp, path, `segment[${i}] may not be empty`));
    else errs.push(...isDNS1123Subdomain(step).map((m) => invalid(pp, path, `segment[${i}]: ${m}`)));
  });
  return errs;
}

/** clientConfig: exactly one of url and service, each then checked. */
export function validateClientConfig(cc: unknown, p: FieldPath): FieldError[] {
  const hasUrl = isSet(cc, 'url');
  const svc = objectAt(cc, 'service');
  if (hasUrl === Boolean(svc)) return [required(p, 'exactly one of url or service is required')];
  if (hasUrl) return validateWebhookUrl(stringAt(cc, 'url'), p.child('url'));
  return validateWebhookService(svc, p.child('service'));
}
