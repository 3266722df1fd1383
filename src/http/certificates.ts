/**
 * X.509 certificates made by orchd: a throwaway CA and a leaf signed by it (the self-signed serving
 * certificate, tls.ts; tests' issuers). @peculiar/asn1-x509 holds the structures; loaded only when a
 * certificate is made.
 */
import { createHash, generateKeyPairSync, randomFillSync, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import * as x509 from '@peculiar/asn1-x509';
import { altNamesFor, isUnspecified } from './host-names.js';

/** kube-apiserver's self-signed certificates last a year. */
const VALIDITY_MS = 365 * 24 * 3600 * 1000;

/** A throwaway CA and a leaf certificate signed by it (PEM), with the leaf's private key (PKCS #8 PEM). */
export interface CertificateChain {
  caPem: string;
  cert: string;
  key: string;
}

/**
 * Issues a CA and a leaf signed by it, the shape of kube-apiserver's GenerateSelfSignedCertKey.
 * @peculiar/asn1-x509 holds the X.509 structures (synchronous, so this is too); node:crypto makes the
 * EC P-256 keys and the ecdsa-with-SHA256 signatures.
 */
export function issueCertificateChain(o: {
  caName: string;
  name: string;
  altNames: string[];
  notBefore: Date;
  notAfter: Date;
  /** A leaf for TLS clients too (a client certificate): extKeyUsage gains clientAuth. */
  clientAuth?: boolean;
}): CertificateChain {
  const caKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leafKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caKeyId = keyIdentifier(caKey.publicKey);
  const ca = signedPem(o.caName, o.caName, caKey.publicKey, caKey.privateKey, o, [
    extension(x509.id_ce_basicConstraints, true, new x509.BasicConstraints({ cA: true })),
    extension(x509.id_ce_keyUsage, true, new x509.KeyUsage(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.keyCertSign)),
    extension(x509.id_ce_subjectKeyIdentifier, false, new x509.SubjectKeyIdentifier(caKeyId)),
  ]);
  const purposes = [x509.id_kp_serverAuth, ...(o.clientAuth ? [x509.id_kp_clientAuth] : [])];
  const altNames = o.altNames.map((n) => new x509.GeneralName(isIP(n) ? { iPAddress: n } : { dNSName: n }));
  const leaf = signedPem(o.name, o.caName, leafKey.publicKey, caKey.privateKey, o, [
    extension(x509.id_ce_basicConstraints, true, new x509.BasicConstraints({ cA: false })),
    extension(x509.id_ce_keyUsage, true, new x509.KeyUsage(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment)),
    extension(x509.id_ce_subjectKeyIdentifier, false, new x509.SubjectKeyIdentifier(keyIdentifier(leafKey.publicKey))),
    extension(x509.id_ce_extKeyUsage, false, new x509.ExtendedKeyUsage(purposes)),
    extension(x509.id_ce_authorityKeyIdentifier, false, new x509.AuthorityKeyIdentifier({ keyIdentifier: new x509.KeyIdentifier(caKeyId) })),
    extension(x509.id_ce_subjectAltName, false, new x509.SubjectAlternativeName(altNames)),
  ]);
  return { caPem: ca, cert: leaf, key: leafKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/** The SHA-1 of the public key, as RFC 5280 4.2.1.2 suggests for key identifiers. */
const keyIdentifier = (key: KeyObject): Buffer =>
  createHash('sha1')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest();

const extension = (extnID: string, critical: boolean, value: object): x509.Extension => new x509.Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });

const commonName = (cn: string): x509.Name =>
  new x509.Name([new x509.RelativeDistinguishedName([new x509.AttributeTypeAndValue({ type: '2.5.4.3', value: new x509.AttributeValue({ utf8String: cn }) })])]);

function signedPem(subject: string, issuer: string, publicKey: KeyObject, signer: KeyObject, validity: { notBefore: Date; notAfter: Date }, extensions: x509.Extension[]): string {
  const serial = randomFillSync(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40; // a positive INTEGER with no leading zero byte (minimal DER)
  const algorithm = new x509.AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 });
  const tbsCertificate = new x509.TBSCertificate({
    version: x509.Version.v3,
    serialNumber: serial.buffer,
    signature: algorithm,
    issuer: commonName(issuer),
    validity: new x509.Validity(validity),
    subject: commonName(subject),
    subjectPublicKeyInfo: AsnConvert.parse(publicKey.export({ type: 'spki', format: 'der' }), x509.SubjectPublicKeyInfo),
    extensions: new x509.Extensions(extensions),
  });
  // An ECDSA signature in DER is the ECDSA-Sig-Value that X.509 carries.
  const signature = sign('sha256', Buffer.from(AsnConvert.serialize(tbsCertificate)), { key: signer, dsaEncoding: 'der' });
  const der = Buffer.from(AsnConvert.serialize(new x509.Certificate({ tbsCertificate, signatureAlgorithm: algorithm, signatureValue: Uint8Array.from(signature).buffer })));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

/** A CA and a serving certificate signed by it, as kube-apiserver's GenerateSelfSignedCertKey makes. */
export function generateSelfSigned(host: string, now = new Date()): { cert: string; key: string } {
  const label = `${isUnspecified(host) ? 'localhost' : host}`;
  const stamp = Math.floor(now.getTime() / 1000);
  const chain = issueCertificateChain({
    caName: `${label}-ca@${stamp}`,
    name: `${label}@${stamp}`,
    altNames: altNamesFor(host),
    notBefore: new Date(now.getTime() - 60_000), // small allowance for clients whose clocks are behind
    notAfter: new Date(now.getTime() + VALIDITY_MS),
  });
  return { cert: chain.cert + chain.caPem, key: chain.key };
}
