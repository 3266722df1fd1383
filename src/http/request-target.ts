/**
 * The request-target read as kube-apiserver reads it (Go's net/http): the path percent-decoded once
 * and otherwise kept as sent. WHATWG URL parsing (`new URL`) would remove `.` and `..` segments
 * (`%2E` too), turn `\` into `/`, and read a path starting `//` as a host, so that a DELETE of
 * `…/policies/x/..` or `…/policies/%2E` would reach the collection; here nothing is normalised and
 * authentication, authorization and the router all read this one path (issue 18). The query alone
 * goes through URL parsing.
 */
import { badRequest } from './respond/status.js';

export interface RequestTarget {
  /** The path, percent-decoded (Go's URL.Path): split on '/' only after decoding, as Kubernetes splits it. */
  path: string;
  /** The query, as a URL for its searchParams. Its pathname is not the request's: read `path`. */
  url: URL;
}

/** `http://host:port` in front of an absolute-form target (`GET http://host/api HTTP/1.1`). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const ESCAPE = /%([0-9A-Fa-f]{2})/g;

/**
 * Throws a 400 for a target Go's server refuses: a bad escape, or neither a path nor `*` nor an
 * absolute URL. A CONNECT's `host:port` has no path (Go: "", which names nothing).
 */
export function requestTarget(raw: string | undefined, method?: string): RequestTarget {
  const target = raw ?? '/';
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  const absolute = ABSOLUTE_FORM.exec(path);
  if (absolute) path = path.slice(absolute[0].length);
  else if (method === 'CONNECT' && !path.startsWith('/')) return { path: '', url: new URL('http://orchd/') };
  else if (path !== '*' && !path.startsWith('/')) throw badRequest(`invalid URI for request: ${JSON.stringify(path)}`);
  // Absolute, not relative to a base: parsing a base URL for every request cost half of it.
  return { path: decodePath(path), url: new URL(q < 0 ? 'http://orchd/' : `http://orchd/${target.slice(q)}`) };
}

function decodePath(raw: string): string {
  const bad = BAD_ESCAPE.exec(raw);
  if (bad) throw badRequest(`invalid URL escape ${JSON.stringify(raw.slice(bad.index, bad.index + 3))}`);
  if (!raw.includes('%')) return raw;
  // The escapes as bytes (the parser lets no other byte above 0x7F into a target), read as UTF-8.
  return Buffer.from(
    raw.replace(ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
}
