import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeEncryptedObject, encodeEncryptedObject, encryptedObjectProblem, type EncryptedObject } from '../../src/log/encryption/kms/encrypted-object.js';
import { KMS_TIMINGS, KmsV2Transformer } from '../../src/log/encryption/kms/kms-v2.js';
import { kmsServiceDefinition } from '../../src/log/encryption/kms/kms-service.js';
import { KmsPluginClient } from '../../src/log/encryption/kms/plugin-client.js';
import { openWithSeed, sealWithSeed } from '../../src/log/encryption/kms/seed-gcm.js';
import { TransformError } from '../../src/log/encryption/transformer.js';
import { tempDir } from '../helpers/temp.js';

const ctx = Buffer.from('events.orch.io/events/default/e1');
const plain = Buffer.from('{"marker":"PLAINTEXT-MARKER-1234"}');

describe('seed cipher', () => {
  const seed = randomBytes(32);

  it('round-trips with a fresh derived key and nonce per write, bound to its storage key', () => {
    const a = sealWithSeed(seed, plain, ctx);
    const b = sealWithSeed(seed, plain, ctx);
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('PLAINTEXT-MARKER'))).toBe(false);
    expect(openWithSeed(seed, a, ctx)).toEqual(plain);
    expect(() => openWithSeed(seed, a, Buffer.from('events.orch.io/events/default/other'))).toThrow('message authentication failed');
    expect(() => openWithSeed(randomBytes(32), a, ctx)).toThrow(TransformError);
  });

  it('refuses cut-short and tampered data as TransformErrors', () => {
    const sealed = sealWithSeed(seed, plain, ctx);
    expect(() => openWithSeed(seed, sealed.subarray(0, 40), ctx)).toThrow('shorter than the required size');
    for (let i = 0; i < sealed.length; i += 9) {
      const bad = Buffer.from(sealed);
      bad[i] ^= 0x01;
      expect(() => openWithSeed(seed, bad, ctx)).toThrow(TransformError);
    }
  });
});

describe('encrypted object', () => {
  const valid: EncryptedObject = { keyId: 'k1', encryptedDEKSource: randomBytes(60), annotations: { 'a.example.com': Buffer.from('x') }, encryptedData: randomBytes(80) };

  it('round-trips', () => {
    expect(decodeEncryptedObject(encodeEncryptedObject(valid))).toEqual(valid);
  });

  it.each<[string, Partial<EncryptedObject>, string]>([
    ['empty key id', { keyId: '' }, 'failed to validate key id: keyID is empty'],
    ['key id over 1 KiB', { keyId: 'k'.repeat(1025) }, 'failed to validate key id: keyID is 1025 bytes, which exceeds the max size of 1024'],
    ['empty sealed data key', { encryptedDEKSource: Buffer.alloc(0) }, 'encrypted DEK source is empty'],
    ['sealed data key over 1 KiB', { encryptedDEKSource: randomBytes(1025) }, 'encrypted DEK source is 1025 bytes, which exceeds the max size of 1024'],
    ['annotation key not a domain', { annotations: { nodots: Buffer.from('x') } }, 'should be a domain with at least two segments separated by dots'],
    ['annotations over 32 KiB', { annotations: { 'a.example.com': randomBytes(32 * 1024) } }, 'total size of annotations is 32781, which exceeds the max size of 32768'],
    ['empty data', { encryptedData: Buffer.alloc(0) }, 'encrypted data is empty'],
  ])('refuses %s', (_name, change, message) => {
    const o = { ...valid, ...change };
    expect(encryptedObjectProblem(o)).toContain(message);
    expect(() => decodeEncryptedObject(encodeEncryptedObject(o))).toThrow(message);
  });

  it('refuses bytes that are no encrypted object, and an unknown scheme', () => {
    expect(() => decodeEncryptedObject(Buffer.from('garbage'))).toThrow(TransformError);
    expect(() => decodeEncryptedObject(encodeEncryptedObject(valid).subarray(0, 20))).toThrow(TransformError);
    const other = Buffer.from(encodeEncryptedObject(valid));
    other[1] = 2;
    expect(() => decodeEncryptedObject(other)).toThrow('unknown encryptedDEKSourceType: 2');
  });
});

/** A KMS v2 server whose answers the test writes, on a unix socket. */
async function fakePlugin(answers: { status: () => object; encrypt?: (plaintext: Buffer) => object }): Promise<{ endpoint: string; close(): Promise<void> }> {
  const dir = tempDir('orchd-kms-');
  const server = new Server();
  const unary =
    (f: (req: any) => object) =>
    (call: ServerUnaryCall<any, object>, cb: sendUnaryData<object>): void =>
      cb(null, f(call.request));
  server.addService(kmsServiceDefinition, {
    Status: unary(answers.status),
    Encrypt: unary((r) => (answers.encrypt ?? ((p: Buffer) => ({ ciphertext: p, keyId: 'k1', annotations: {} })))(r.plaintext)),
    Decrypt: unary((r) => ({ plaintext: r.ciphertext })),
  });
  const socket = join(dir, 'kms.sock');
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  return {
    endpoint: `unix://${socket}`,
    async close() {
      server.forceShutdown();
    },
  };
}

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A started provider and its first health problem (or undefined when the first poll passed). */
async function firstPoll(endpoint: string): Promise<{ t: KmsV2Transformer; problem: string | undefined }> {
  let first!: (p: string | undefined) => void;
  const seen = new Promise<string | undefined>((r) => (first = r));
  const t = new KmsV2Transformer('p', new KmsPluginClient(endpoint, 1000), { ...KMS_TIMINGS, pollIntervalMs: 60_000, failedPollIntervalMs: 60_000 }, first);
  closers.push(() => t.close());
  t.start();
  return { t, problem: await seen };
}

describe('KMS v2 Status checks', () => {
  it('a healthy plugin: no problem, a data key made, values seal and open', async () => {
    const p = await fakePlugin({ status: () => ({ version: 'v2', healthz: 'ok', keyId: 'k1' }) });
    closers.push(() => p.close());
    const { t, problem } = await firstPoll(p.endpoint);
    expect(problem).toBeUndefined();
    const sealed = t.seal(plain, ctx);
    expect(sealed.toString('latin1').startsWith('orch:enc:kms:v2:p:')).toBe(true);
    expect(t.open(sealed, ctx)).toEqual(plain);
  });

  it('a bad Status fails the check with every reason, and nothing seals without a data key', async () => {
    const p = await fakePlugin({ status: () => ({ version: 'v1', healthz: 'broken disk', keyId: '' }) });
    closers.push(() => p.close());
    const { t, problem } = await firstPoll(p.endpoint);
    expect(problem).toBe('kmsv2 Provider p is not healthy, error: got unexpected healthz status: broken disk, expected KMSv2 API version v2, got v1, got invalid KMSv2 KeyID hash "": keyID is empty');
    expect(t.health()).toBe(problem);
    expect(() => t.seal(plain, ctx)).toThrow('kms provider p: no data key yet: kmsv2 Provider p is not healthy');
  });

  it('an Encrypt answer under another key id than Status named is refused', async () => {
    const p = await fakePlugin({ status: () => ({ version: 'v2', healthz: 'ok', keyId: 'k1' }), encrypt: (c) => ({ ciphertext: c, keyId: 'k2', annotations: {} }) });
    closers.push(() => p.close());
    const { problem } = await firstPoll(p.endpoint);
    expect(problem).toMatch(/failed to rotate DEK uid="[0-9a-f-]+": the key id of Encrypt \(hash "sha256:[0-9a-f]{64}"\) is not the one of Status/);
  });

  it('an Encrypt answer with invalid annotations is refused', async () => {
    const p = await fakePlugin({ status: () => ({ version: 'v2', healthz: 'ok', keyId: 'k1' }), encrypt: (c) => ({ ciphertext: c, keyId: 'k1', annotations: { Bad_Key: Buffer.from('x') } }) });
    closers.push(() => p.close());
    const { problem } = await firstPoll(p.endpoint);
    expect(problem).toContain('failed to validate annotations');
  });

  it('honours the timeout on every call: a Status that never answers fails after it', async () => {
    const dir = tempDir('orchd-kms-');
    const server = new Server();
    server.addService(kmsServiceDefinition, { Status: () => undefined, Encrypt: () => undefined, Decrypt: () => undefined });
    const socket = join(dir, 'kms.sock');
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    closers.push(async () => {
      server.forceShutdown();
    });
    const client = new KmsPluginClient(`unix://${socket}`, 200);
    closers.push(() => client.close());
    const started = Date.now();
    await expect(client.status()).rejects.toThrow('DEADLINE_EXCEEDED');
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
