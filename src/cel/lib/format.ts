/**
 * Kubernetes' format library: format.named(name) → optional<Format>, format.<name>() and
 * Format.validate(s) → optional.none() when valid, or optional.of(list of messages). The messages
 * are Kubernetes' validation messages for these formats.
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { sync } from './common.js';

type Check = (s: string) => string[];

export class CelFormat {
  constructor(
    readonly name: string,
    readonly check: Check,
  ) {}
  toJSON(): string {
    return this.name;
  }
  /** Kubernetes' Format.Equal: the same named format. */
  celEquals(other: unknown): boolean {
    return other instanceof CelFormat && other.name === this.name;
  }
}

const regexError = (msg: string, fmt: string, ...examples: string[]) => `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(',  or ')}, regex used for validation is '${fmt}')`;
const maxLen = (n: number) => `must be no more than ${n} characters`;

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QNAME_PART = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';
const full = (r: string) => new RegExp(`^${r}$`);

const dns1123Label: Check = (s) => {
  const e: string[] = [];
  if (s.length > 63) e.push(maxLen(63));
  if (!full(LABEL).test(s))
    e.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", LABEL, 'my-name', '123-abc'));
  return e;
};
const dns1123Subdomain: Check = (s) => {
  const e: string[] = [];
  if (s.length > 253) e.push(maxLen(253));
  if (!full(SUBDOMAIN).test(s))
    e.push(
      regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", SUBDOMAIN, 'example.com'),
    );
  return e;
};
const dns1035Label: Check = (s) => {
  const e: string[] = [];
  if (s.length > 63) e.push(maxLen(63));
  if (!full(DNS1035).test(s))
    e.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035,
        'my-name',
        'abc-123',
      ),
    );
  return e;
};
const qualifiedName: Check = (s) => {
  const parts = s.split('/');
  const e: string[] = [];
  let name = s;
  if (parts.length === 2) {
    if (parts[0] === '') e.push('prefix part must be non-empty');
    else e.push(...dns1123Subdomain(parts[0]).map((m) => `prefix part ${m}`));
    name = parts[1];
  } else if (parts.length > 2) {
    return [
      regexError("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME_PART, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name === '') e.push('name part must be non-empty');
  else if (name.length > 63) e.push(`name part ${maxLen(63)}`);
  if (name !== '' && !full(QNAME_PART).test(name))
    e.push(`name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME_PART, 'MyName', 'my.name', '123-abc')}`);
  return e;
};
const labelValue: Check = (s) => {
  const e: string[] = [];
  if (s.length > 63) e.push(maxLen(63));
  if (!full(LABEL_VALUE).test(s))
    e.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return e;
};
/** The *Prefix formats accept a trailing '-' (a generateName), checked without it. */
const prefix =
  (c: Check): Check =>
  (s) =>
    c(s.endsWith('-') ? s.slice(0, -1) : s);
const pattern =
  (re: RegExp, msg: string): Check =>
  (s) =>
    re.test(s) ? [] : [msg];

export const FORMATS: Record<string, Check> = {
  dns1123Label,
  dns1123Subdomain,
  dns1035Label,
  qualifiedName,
  labelValue,
  dns1123LabelPrefix: prefix(dns1123Label),
  dns1123SubdomainPrefix: prefix(dns1123Subdomain),
  dns1035LabelPrefix: prefix(dns1035Label),
  uuid: pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'does not match the UUID format'),
  byte: pattern(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'invalid base64'),
  date: pattern(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, 'invalid date'),
  datetime: pattern(/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/, 'invalid datetime'),
  uri: (s) => {
    try {
      new URL(s);
      return [];
    } catch {
      return ['invalid URI'];
    }
  },
};

class FormatNamespace {}

export function registerFormat(env: Environment): void {
  const T = 'kubernetes.NamedFormat';
  env.registerType(T, CelFormat);
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  env.registerOperator(`${T} == ${T}`, (a: CelFormat, b: CelFormat) => a.celEquals(b));
  env.registerFunction(
    `FormatNamespace.named(string): optional<${T}>`,
    (_: unknown, name: string) => (Object.hasOwn(FORMATS, name) ? Optional.of(new CelFormat(name, FORMATS[name])) : Optional.none()),
    sync,
  );
  for (const name of Object.keys(FORMATS)) {
    env.registerFunction(`FormatNamespace.${name}(): ${T}`, () => new CelFormat(name, FORMATS[name]), sync);
  }
  env.registerFunction(
    `${T}.validate(string): optional<list<string>>`,
    (f: CelFormat, s: string) => {
      const errs = f.check(s);
      return errs.length === 0 ? Optional.none() : Optional.of(errs);
    },
    sync,
  );
}
