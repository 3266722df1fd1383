/**
 * The string formats a CustomResourceDefinition's schema may check (kube-openapi's strfmt, as
 * kube-apiserver keeps them: any other format is documentation only). Each is a test of the value;
 * a value that fails reads `spec.email in body must be of type email: "x"`.
 */
import { isIP } from 'node:net';

const re = (r: RegExp) => (s: string) => r.test(s);
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuidVersion = (v: string) => re(new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${v}[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`, 'i'));
const HOSTNAME = /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
const EMAIL = /^[^\s@"<>()[\]\\,;:]+(\.[^\s@"<>()[\]\\,;:]+)*@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DURATION = /^((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+$/;
const MAC = /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

function validCidr(s: string): boolean {
  const [ip, bits, extra] = s.split('/');
  if (extra !== undefined || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  const family = isIP(ip ?? '');
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}

function luhn(s: string): boolean {
  const digits = s.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

const isbn10 = (s: string) => {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(c)) return false;
  const sum = [...c].reduce((acc, ch, i) => acc + (ch === 'X' ? 10 : Number(ch)) * (10 - i), 0);
  return sum % 11 === 0;
};
const isbn13 = (s: string) => {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(c)) return false;
  const sum = [...c].reduce((acc, ch, i) => acc + Number(ch) * (i % 2 === 0 ? 1 : 3), 0);
  return sum % 10 === 0;
};

const FORMATS: Record<string, (s: string) => boolean> = {
  bsonobjectid: re(/^[0-9a-f]{24}$/i),
  uri: (s) => URL.canParse(s),
  email: re(EMAIL),
  hostname: re(HOSTNAME),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: validCidr,
  mac: re(MAC),
  uuid: re(UUID),
  uuid3: uuidVersion('3'),
  uuid4: uuidVersion('4'),
  uuid5: uuidVersion('5'),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: luhn,
  ssn: re(/^\d{3}[- ]?\d{2}[- ]?\d{4}$/),
  hexcolor: re(/^#?([0-9a-f]{3}|[0-9a-f]{6})$/i),
  rgbcolor: re(/^rgb\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*\)$/),
  byte: (s) => BASE64.test(s) && s.length % 4 === 0,
  password: () => true,
  date: validDate,
  duration: re(DURATION),
  datetime: (s) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  'date-time': (s) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
};

/** Whether a string fits a format; true for formats that are not checked. */
export function fitsFormat(format: string, value: string): boolean {
  const check = FORMATS[format];
  return check ? check(value) : true;
}
