import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { problemLine } from '../../src/config/load.js';
import { loadServerConfig } from '../../src/config/server-config.js';
import { makeCertificate, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const certs = makeCertificate(dir);
const tracing = writeFile(dir, 'tracing.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\n');
const badTracing = writeFile(dir, 'bad-tracing.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: -1\n');
const badAdmission = writeFile(dir, 'bad-admission.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: AdmissionConfiguration\nplugins: [{}]\n');

const lines = (r: ReturnType<typeof loadServerConfig>) => (r.ok ? [] : r.problems.map(problemLine));

describe('the configuration files of one start', () => {
  it('is empty without flags', () => {
    expect(loadServerConfig({})).toEqual({ ok: true, config: {} });
  });

  it('keeps each document with its file and version', () => {
    const r = loadServerConfig({ tracing, tlsCertFile: certs.cert, tlsPrivateKeyFile: certs.key });
    expect(r.ok && r.config.tracing).toEqual({ file: tracing, apiVersion: 'apiserver.config.orch.io/v1', value: { endpoint: 'localhost:4317' } });
    expect(r.ok && r.config.tls?.certFile).toBe(certs.cert);
    expect(r.ok && r.config.tls?.cert.toString()).toBe(certs.certPem);
  });

  it('collects the problems of every file, and gives no configuration at all', () => {
    const r = loadServerConfig({ tracing: badTracing, admission: badAdmission, authentication: join(dir, 'none.yaml') });
    expect(r.ok).toBe(false);
    expect(lines(r)).toEqual([
      `${join(dir, 'none.yaml')}: unable to read the file: no such file or directory`,
      `${badTracing}: samplingRatePerMillion: Invalid value: -1: sampling rate must be positive`,
      `${badAdmission}: plugins[0].name: Required value`,
    ]);
    expect('config' in r).toBe(false);
  });

  it.each([
    ['a certificate without its key', () => ({ tlsCertFile: certs.cert }), () => [`${certs.cert}: --tls-private-key-file is required with --tls-cert-file`]],
    ['a key without its certificate', () => ({ tlsPrivateKeyFile: certs.key }), () => [`${certs.key}: --tls-cert-file is required with --tls-private-key-file`]],
    ['a key that does not match', () => ({ tlsCertFile: certs.cert, tlsPrivateKeyFile: certs.otherKey }), () => [`${certs.otherKey}: private key does not match public key in ${certs.cert}`]],
    ['a certificate that is not one', () => ({ tlsCertFile: tracing, tlsPrivateKeyFile: certs.key }), () => [expect.stringMatching(new RegExp(`^${tracing}: not a PEM certificate: `))]],
    ['a key that is not one', () => ({ tlsCertFile: certs.cert, tlsPrivateKeyFile: tracing }), () => [expect.stringMatching(new RegExp(`^${tracing}: not a PEM private key: `))]],
  ])('refuses %s', (_name, files, want) => {
    expect(lines(loadServerConfig(files()))).toEqual(want());
  });
});
