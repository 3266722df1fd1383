import { createHash } from 'node:crypto';
import { packJson, unpackJson } from '../../codec.js';
import { TransformError } from '../transformer.js';

/**
 * What a KMS v2 value holds after its `orch:enc:kms:v2:<name>:` prefix: the data key seed as the
 * plugin sealed it, the plugin's key id and annotations (all needed to ask the plugin to open the
 * seed again), and the value sealed under the seed. Stored as the msgpack array
 * [1, keyId, encryptedDEKSource, annotations, encryptedData]; the leading 1 names the seed scheme
 * (seed-gcm.ts), so another scheme can come later beside it.
 */
export interface EncryptedObject {
  keyId: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  encryptedData: Buffer;
}

const SEED_SCHEME = 1;
/** kube-apiserver's bounds on what a plugin may hand back. */
const KEY_ID_MAX = 1024;
const DEK_SOURCE_MAX = 1024;
const ANNOTATIONS_MAX = 32 * 1024;
const FQDN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

export function encodeEncryptedObject(o: EncryptedObject): Buffer {
  return packJson([SEED_SCHEME, o.keyId, o.encryptedDEKSource, o.annotations, o.encryptedData]);
}

/** Throws TransformError for bytes that are no valid encrypted object. */
export function decodeEncryptedObject(bytes: Buffer): EncryptedObject {
  let fields: unknown;
  try {
    fields = unpackJson(bytes);
  } catch (err) {
    throw new TransformError('the stored data is not a KMS v2 encrypted object', { cause: err });
  }
  if (!Array.isArray(fields) || fields.length !== 5) throw new TransformError('the stored data is not a KMS v2 encrypted object');
  const [scheme, keyId, source, annotations, data] = fields as unknown[];
  if (scheme !== SEED_SCHEME) throw new TransformError(`unknown encryptedDEKSourceType: ${String(scheme)}`);
  if (typeof keyId !== 'string' || !isBytes(source) || !isBytes(data) || annotations === null || typeof annotations !== 'object' || Array.isArray(annotations)) {
    throw new TransformError('the stored data is not a KMS v2 encrypted object');
  }
  const o: EncryptedObject = { keyId, encryptedDEKSource: bytesOf(source), annotations: {}, encryptedData: bytesOf(data) };
  for (const [k, v] of Object.entries(annotations)) {
    if (!isBytes(v)) throw new TransformError('the stored data is not a KMS v2 encrypted object');
    o.annotations[k] = bytesOf(v);
  }
  const problem = encryptedObjectProblem(o);
  if (problem) throw new TransformError(problem);
  return o;
}

/** What is wrong with what the plugin handed back (or what was stored), as kube-apiserver words it. */
export function encryptedObjectProblem(o: Omit<EncryptedObject, 'encryptedData'> & { encryptedData?: Buffer }): string | undefined {
  if (o.encryptedData !== undefined && o.encryptedData.length === 0) return 'encrypted data is empty';
  if (o.encryptedDEKSource.length === 0) return 'failed to validate encrypted DEK source: encrypted DEK source is empty';
  if (o.encryptedDEKSource.length > DEK_SOURCE_MAX) {
    return `failed to validate encrypted DEK source: encrypted DEK source is ${o.encryptedDEKSource.length} bytes, which exceeds the max size of ${DEK_SOURCE_MAX}`;
  }
  const keyIdProblem = keyIdProblemOf(o.keyId);
  if (keyIdProblem) return `failed to validate key id: ${keyIdProblem}`;
  let size = 0;
  for (const [k, v] of Object.entries(o.annotations)) {
    if (!FQDN.test(k)) return `failed to validate annotations: annotations: Invalid value: ${JSON.stringify(k)}: should be a domain with at least two segments separated by dots`;
    size += Buffer.byteLength(k) + v.length;
  }
  if (size > ANNOTATIONS_MAX) return `failed to validate annotations: total size of annotations is ${size}, which exceeds the max size of ${ANNOTATIONS_MAX}`;
  return undefined;
}

export function keyIdProblemOf(keyId: string): string | undefined {
  if (keyId.length === 0) return 'keyID is empty';
  const size = Buffer.byteLength(keyId);
  if (size > KEY_ID_MAX) return `keyID is ${size} bytes, which exceeds the max size of ${KEY_ID_MAX}`;
  return undefined;
}

/** Which open seed an encrypted object needs: everything the plugin's Decrypt is given, hashed. */
export function seedCacheKey(o: Omit<EncryptedObject, 'encryptedData'>): string {
  const h = createHash('sha256');
  const part = (b: Buffer | string) => {
    const bytes = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
    const n = Buffer.allocUnsafe(4);
    n.writeUInt32BE(bytes.length, 0);
    h.update(n).update(bytes);
  };
  part(o.encryptedDEKSource);
  part(o.keyId);
  for (const k of Object.keys(o.annotations).sort()) {
    part(k);
    part(o.annotations[k]);
  }
  return h.digest('base64');
}

/** The plugin's key id as logs and errors show it: a hash, never the id itself. */
export const keyIdHash = (keyId: string): string => (keyId ? `sha256:${createHash('sha256').update(keyId).digest('hex')}` : '');

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
const bytesOf = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
