/**
 * The string formats of the Kubernetes API (k8s.io/apimachinery util/validation and
 * api/validate/content): each check returns the list of reasons a value fails, worded as Kubernetes
 * words them, and an empty list when it passes. Field errors are built from these by the callers, so
 * label selectors, names and keys all share one definition of each format. They live with the
 * selectors, the lowest room that needs them (label keys and values); src/resources uses them from here.
 */
/** Kubernetes counts lengths in bytes of UTF-8. */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelValueFmt = `(${qualifiedNameFmt})?`;

const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

/** "… (e.g. 'my-name',  or '123-abc', regex used for validation is '…')": RegexError's wording, double space included. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
export const maxLenError = (n: number): string => `must be no more than ${n} bytes`;
export const emptyError = (): string => 'must be non-empty';

/** RFC 1123 label: namespace names, and each dot-separated part of a subdomain. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a label can only have failed on its dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          dns1123LabelFmt,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

/** RFC 1123 subdomain: most object names, label-key prefixes, API groups. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        dns1123SubdomainFmt,
        'example.com',
      ),
    );
  }
  return errs;
}

/** RFC 1035 label: API versions, and kinds once lower-cased. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX) errs.push(maxLenError(DNS1035_LABEL_MAX));
  if (!dns1035LabelRe.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        dns1035LabelFmt,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/**
 * A qualified name (a label key): an optional DNS subdomain prefix and '/', then a name of at most
 * 63 characters of [A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]. Used by label keys, annotation keys,
 * finalizers, match condition names and Event reportingController.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    const msg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    return [`a valid label key ${regexError(msg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** A label value: empty, or at most 63 characters in the qualified-name charset. */
export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!labelValueRe.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        labelValueFmt,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** A name usable as one URL path segment: resourceNames of rules and paramRef.name. */
export function isPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return isPathSegmentPrefix(value);
}

/** The prefix form: a generateName that will be completed may still be '.'. */
export function isPathSegmentPrefix(value: string): string[] {
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (value.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/**
 * generateName is checked as a prefix: a trailing '-' is fine there because random characters will
 * follow it, so it is masked before the name check (Kubernetes' maskTrailingDash).
 */
export const maskTrailingDash = (name: string): string => (name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name);

/** How a kind's metadata.name is checked (Kubernetes' ValidateNameFunc). */
export type NameFormat = 'dns-subdomain' | 'dns-label' | 'path-segment';

export function checkName(format: NameFormat, name: string, prefix: boolean): string[] {
  switch (format) {
    case 'dns-label':
      return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
    case 'path-segment':
      return prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
    default:
      return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
  }
}

/** A webhook name: a DNS subdomain with at least three dot-separated segments ("a.b.c"). */
export function isFullyQualifiedName(value: string): string[] {
  const errs = isDNS1123Subdomain(value);
  if (errs.length) return [errs.join(',')];
  if (value.split('.').length < 3) return ['should be a domain with at least three segments separated by dots'];
  return [];
}

const celIdentRe = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
/** The words CEL's lexer reserves: no identifier may be one of them (the CEL grammar's RESERVED). */
export const CEL_RESERVED: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** A CEL identifier (IDENT minus RESERVED in the CEL grammar): what variable names must be. */
export const isCELIdentifier = (name: string): boolean => celIdentRe.test(name) && !CEL_RESERVED.has(name);
