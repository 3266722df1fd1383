/**
 * A minimal X.509 v3 certificate writer (DER), enough for the self-signed serving certificate that
 * kube-apiserver generates when it is given none: a CA and a server certificate signed by it, with
 * subject alternative names. Node can parse certificates but not create them; this writes the few
 * ASN.1 shapes needed and lets node:crypto do the keys and signatures (ECDSA P-256 with SHA-256).
 */
import { createHash, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

// ---- DER primitives ----

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(body.length), body]);
const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, body: Buffer): Buffer => tlv(0xa0 + n, body);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const bits = (b: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps the sign bit clear). */
function unsigned(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && (b[i + 1]! & 0x80) === 0) i++;
  const body = b.subarray(i);
  return tlv(0x02, (body[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), body]) : body);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [parts[0]! * 40 + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 requires. */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const name = (commonName: string): Buffer => seq(set(seq(oid('2.5.4.3'), utf8(commonName))));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // IPv6: expand "::" and write eight 16-bit groups.
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));

const keyId = (spki: Buffer): Buffer => createHash('sha1').update(spki).digest();

// ---- certificates ----

export interface CertificateRequest {
  commonName: string;
  /** The certificate's public key. */
  publicKey: KeyObject;
  /** Who signs: the issuer's name and private key (the subject's own for a self-signed CA). */
  issuer: { commonName: string; privateKey: KeyObject; publicKey: KeyObject };
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  /** Subject alternative names: host names and IP addresses (each told apart by its form). */
  altNames?: string[];
  /** A leaf for TLS clients too (a client certificate): extKeyUsage gains clientAuth. */
  clientAuth?: boolean;
}

/** A signed certificate as PEM. Keys must be EC P-256 (the signature is ecdsa-with-SHA256). */
export function createCertificate(r: CertificateRequest): string {
  const spki = r.publicKey.export({ type: 'spki', format: 'der' });
  const issuerSpki = r.issuer.publicKey.export({ type: 'spki', format: 'der' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;

  const extensions = [
    // basicConstraints, critical.
    extension('2.5.29.19', true, r.ca ? seq(bool(true)) : seq()),
    // keyUsage, critical: CA digitalSignature|keyEncipherment|keyCertSign; server digitalSignature|keyEncipherment.
    extension('2.5.29.15', true, r.ca ? bits(Buffer.from([0xa4]), 2) : bits(Buffer.from([0xa0]), 5)),
    extension('2.5.29.14', false, octets(keyId(spki))),
  ];
  if (!r.ca) {
    const usages = [oid('1.3.6.1.5.5.7.3.1'), ...(r.clientAuth ? [oid('1.3.6.1.5.5.7.3.2')] : [])];
    extensions.push(extension('2.5.29.37', false, seq(...usages))); // extKeyUsage serverAuth (, clientAuth)
    extensions.push(extension('2.5.29.35', false, seq(tlv(0x80, keyId(issuerSpki))))); // authorityKeyIdentifier
  }
  if (r.altNames && r.altNames.length > 0) {
    const names = r.altNames.map((n) => (isIP(n) ? tlv(0x87, ipBytes(n)) : tlv(0x82, Buffer.from(n, 'ascii'))));
    extensions.push(extension('2.5.29.17', false, seq(...names)));
  }

  const tbs = seq(
    explicit(0, unsigned(Buffer.from([2]))), // v3
    unsigned(serial),
    ecdsaSha256,
    name(r.issuer.commonName),
    seq(time(r.notBefore), time(r.notAfter)),
    name(r.commonName),
    spki,
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, { key: r.issuer.privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, ecdsaSha256, bits(signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/** The public half of a private key. */
export const publicKeyOf = (privateKey: KeyObject): KeyObject => createPublicKey(privateKey);
