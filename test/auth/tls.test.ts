/**
 * The self-signed serving certificate: a valid X.509 chain (checked by openssl and by a real TLS
 * handshake), kept and reused, replaced when expired or when it does not cover the bind address.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSigned } from '../../src/http/certificates.js';
import { needsTls, servingTls } from '../../src/http/tls.js';
import { httpsCall } from './https-call.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
beforeAll(async () => {
  dir = tempDir('orchd-tls-');
});

const splitPem = (bundle: string): string[] => bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g) ?? [];

describe('self-signed certificate', () => {
  it('is a serving certificate signed by its own CA, which openssl verifies for serverAuth', async () => {
    const { cert } = generateSelfSigned('127.0.0.1');
    const [leaf, ca] = splitPem(cert);
    expect(leaf && ca).toBeTruthy();
    const leafX = new X509Certificate(leaf!);
    const caX = new X509Certificate(ca!);
    expect(caX.ca).toBe(true);
    expect(leafX.ca).toBe(false);
    expect(leafX.checkIssued(caX)).toBe(true);
    expect(leafX.verify(caX.publicKey)).toBe(true);
    expect(leafX.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(leafX.subjectAltName).toContain('DNS:localhost');
    expect(leafX.checkIP('::1')).toBe('::1');
    await writeFile(join(dir, 'ca.pem'), ca!);
    await writeFile(join(dir, 'leaf.pem'), leaf!);
    const out = execFileSync('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.pem'), join(dir, 'leaf.pem')], { encoding: 'utf8' });
    expect(out.trim()).toMatch(/: OK$/);
  });

  it('is accepted by a TLS client that trusts the bundle, for 127.0.0.1 and localhost, and refused without it', async () => {
    const { cert, key } = generateSelfSigned('127.0.0.1');
    const server = createServer({ cert, key }, (_req, res) => res.end('{"ok":true}'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      expect((await httpsCall(`https://127.0.0.1:${port}`, cert, 'GET', '/')).body).toEqual({ ok: true });
      expect((await httpsCall(`https://localhost:${port}`, cert, 'GET', '/')).body).toEqual({ ok: true });
      await expect(httpsCall(`https://127.0.0.1:${port}`, generateSelfSigned('127.0.0.1').cert, 'GET', '/')).rejects.toThrow(/certificate/i);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('names the bind address when it is not a wildcard', () => {
    const leaf = new X509Certificate(splitPem(generateSelfSigned('10.1.2.3').cert)[0]!);
    expect(leaf.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(new X509Certificate(splitPem(generateSelfSigned('0.0.0.0').cert)[0]!).checkIP('0.0.0.0')).toBeUndefined();
  });
});

describe('servingTls', () => {
  it('is needed with authentication, with a given pair, or off loopback; not for a bare loopback server', () => {
    expect(needsTls({ host: '127.0.0.1', authenticationConfigured: false })).toBe(false);
    expect(needsTls({ host: 'localhost', authenticationConfigured: false })).toBe(false);
    expect(needsTls({ host: '127.0.0.1', authenticationConfigured: true })).toBe(true);
    expect(needsTls({ host: '0.0.0.0', authenticationConfigured: false })).toBe(true);
  });

  it('keeps the pair in the data folder, reuses it, and replaces it when expired or not covering the address', async () => {
    const dataDir = await mkdtemp(join(dir, 'data-'));
    const first = await servingTls({ host: '127.0.0.1', dataDir, authenticationConfigured: true });
    expect(first?.selfSigned).toBe(true);
    expect(await readFile(join(dataDir, 'apiserver.crt'))).toEqual(first!.cert);
    const again = await servingTls({ host: '127.0.0.1', dataDir, authenticationConfigured: true });
    expect(again!.cert.equals(first!.cert)).toBe(true);

    const reasons: string[] = [];
    const moved = await servingTls({ host: '10.9.8.7', dataDir, authenticationConfigured: true, onRegenerate: (w) => reasons.push(w) });
    expect(moved!.cert.equals(first!.cert)).toBe(false);
    expect(reasons).toEqual(['it does not cover 10.9.8.7']);

    const later = new Date(Date.now() + 400 * 24 * 3600 * 1000);
    const renewed = await servingTls({ host: '10.9.8.7', dataDir, authenticationConfigured: true, now: later, onRegenerate: (w) => reasons.push(w) });
    expect(renewed!.cert.equals(moved!.cert)).toBe(false);
    expect(reasons[1]).toBe('expired or about to expire');

    await writeFile(join(dataDir, 'apiserver.key'), 'garbage');
    const repaired = await servingTls({ host: '10.9.8.7', dataDir, authenticationConfigured: true, onRegenerate: (w) => reasons.push(w) });
    expect(reasons[2]).toMatch(/^unreadable/);
    expect(new X509Certificate(repaired!.cert).checkIP('10.9.8.7')).toBe('10.9.8.7');
  });
});
